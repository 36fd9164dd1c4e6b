package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// FuzzCallbackData feeds parseCallbackData the data of a button press,
// which any client can forge. What it accepts re-serialises with
// callbackData to exactly the data pressed, with a non-empty token; and
// the toast answering the press, cut by truncateUTF16, stays within its
// cap and is a prefix of the text it shortens.
func FuzzCallbackData(f *testing.F) {
	for _, s := range []string{
		"a:K7Q2MX9P", "d:K7Q2MX9P", "A:K7Q2MX9P", "a:", "x:K7Q2", "", "a", "a:a:b", "A:\xff\xfe",
		"approved — ran in 0.2s", strings.Repeat("😀", 120), "d:" + strings.Repeat("Q", 70),
	} {
		f.Add(s, uint8(200))
	}
	f.Fuzz(func(t *testing.T, data string, n uint8) {
		if d, token, ok := parseCallbackData(data); ok {
			if token == "" {
				t.Fatalf("parseCallbackData(%q) accepted an empty token", data)
			}
			if back := callbackData(d, token); back != data {
				t.Fatalf("parseCallbackData(%q) = %v %q, which serialises to %q", data, d, token, back)
			}
		} else if d != 0 || token != "" {
			t.Fatalf("parseCallbackData(%q) refused but returned %v %q", data, d, token)
		}
		limit := int(n)%maxToast + 1
		out := truncateUTF16(data, limit)
		if l := gateways.UTF16Len(out); l > limit {
			t.Fatalf("truncateUTF16(%q, %d) = %q, %d UTF-16 units", data, limit, out, l)
		}
		if out != data && !strings.HasPrefix(data, strings.TrimSuffix(out, "…")) {
			t.Fatalf("truncateUTF16(%q, %d) = %q, not a prefix", data, limit, out)
		}
		if utf8.ValidString(data) && !utf8.ValidString(out) {
			t.Fatalf("truncateUTF16(%q, %d) = %q cuts a character", data, limit, out)
		}
	})
}
