package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodings are every way Forms promises to catch a secret inside a blob.
var encodings = map[string]func([]byte) string{
	"base64 std":        base64.StdEncoding.EncodeToString,
	"base64 std raw":    base64.RawStdEncoding.EncodeToString,
	"base64 url":        base64.URLEncoding.EncodeToString,
	"base64 url raw":    base64.RawURLEncoding.EncodeToString,
	"hex":               hex.EncodeToString,
	"HEX":               func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) },
	"query escape":      func(b []byte) string { return url.QueryEscape(string(b)) },
	"path escape":       func(b []byte) string { return url.PathEscape(string(b)) },
	"query escape %2f":  func(b []byte) string { return lowerPercent(url.QueryEscape(string(b))) },
	"path escape lower": func(b []byte) string { return lowerPercent(url.PathEscape(string(b))) },
	"json":              func(b []byte) string { return jsonContents(string(b), true) },
	"json no html":      func(b []byte) string { return jsonContents(string(b), false) },
	"json ascii":        func(b []byte) string { return asciiEscapes(jsonContents(string(b), false)) },
}

func TestRedactEncodedForms(t *testing.T) {
	const secret = "tok/en+with?odd&chars ~9Zq" // '/' and '+' differ between the alphabets
	set := New(secret)
	for name, enc := range encodings {
		t.Run(name, func(t *testing.T) {
			// On its own, and inside longer blobs at each byte alignment.
			for _, around := range [][2]string{{"", ""}, {"a", "b"}, {"ab", "cd"}, {"abc", "defg"}, {`{"k":"`, `"}`}} {
				in := "before " + enc([]byte(around[0]+secret+around[1])) + " after"
				out := set.Redact(in)
				if !strings.Contains(out, Mask) {
					t.Errorf("Redact(%q) = %q: nothing masked", in, out)
				}
				if set.Contains(out) || set.Leaks(out) {
					t.Errorf("Redact(%q) = %q: a form survives", in, out)
				}
				if !set.Contains(in) {
					t.Errorf("Contains(%q) = false", in)
				}
			}
		})
	}
}

// TestRedactJSONEscapedSecret: a password with characters JSON escapes,
// echoed in a JSON body (tool output, an MCP result), is masked as it is
// written there.
func TestRedactJSONEscapedSecret(t *testing.T) {
	const secret = `pa&ss"<wörd>\1`
	set := New(secret)
	// The encoders of the table, checked against the text JSON writers
	// make (Go's encoding/json, with and without HTML escapes; Python's
	// json.dumps).
	for name, want := range map[string]string{
		"json":         `pa\u0026ss\"\u003cwörd\u003e\\1`,
		"json no html": `pa&ss\"<wörd>\\1`,
		"json ascii":   `pa&ss\"<w\u00f6rd>\\1`,
	} {
		if got := encodings[name]([]byte(secret)); got != want {
			t.Errorf("%s encodes %s as %s, want %s", name, secret, got, want)
		}
	}
	for _, name := range []string{"json", "json no html", "json ascii"} {
		in := `{"password":"` + encodings[name]([]byte(secret)) + `"}`
		if out := set.Redact(in); out != `{"password":"`+Mask+`"}` {
			t.Errorf("%s: Redact(%s) = %s; want the escaped password masked", name, in, out)
		}
		if !set.Contains(in) {
			t.Errorf("%s: Contains(%s) = false", name, in)
		}
	}
}

func TestShortSecretsOnlyWholeForms(t *testing.T) {
	// A short secret's inner base64 parts would be a few characters that
	// innocent text holds by chance; only its whole encodings are masked.
	set := New("abc123")
	for _, f := range Forms("abc123") {
		if len(f) < len("abc123") {
			t.Errorf("form %q of a 6-byte secret is shorter than the secret", f)
		}
	}
	if got := set.Redact("YWJjMTIz and 616263313233"); got != Mask+" and "+Mask {
		t.Errorf("whole forms not masked: %q", got)
	}
	if got := set.Redact("innocent MTIz text"); got != "innocent MTIz text" {
		t.Errorf("a fragment was masked: %q", got)
	}
}

func TestLongFormsMaskedWhole(t *testing.T) {
	set := New("secret-one-long", "secret-one")
	if got := set.Redact("x secret-one-long y"); got != "x "+Mask+" y" {
		t.Errorf("Redact = %q; the longer secret must be masked whole", got)
	}
	if set.Len() != 2 {
		t.Errorf("Len = %d, want 2 (forms are not secrets)", set.Len())
	}
}

// FuzzRedact: whatever surrounds it and however it is encoded, no secret
// or encoded form of it survives Redact.
func FuzzRedact(f *testing.F) {
	f.Add("secret-value-0123", "pre", "post", "text around", uint8(0))
	f.Add("tok/en+with?odd&chars", "a", "bc", "", uint8(3))
	f.Add("ÿþ\x00binary-ish", "", "", "x", uint8(7))
	names := make([]string, 0, len(encodings)+1)
	for name := range encodings {
		names = append(names, name)
	}
	names = append(names, "raw")
	f.Fuzz(func(t *testing.T, secret, prefix, suffix, text string, which uint8) {
		set := New(secret)
		v := strings.TrimSpace(secret)
		if set.Len() == 0 || strings.ContainsAny(v, "[]") {
			return // a secret with a bracket can re-form around the mask: not a leak
		}
		for _, form := range Forms(v) {
			if strings.Contains(Mask, form) {
				return // the mask itself would count as the secret
			}
		}
		name := names[int(which)%len(names)]
		blob := prefix + v + suffix
		if enc := encodings[name]; enc != nil {
			blob = enc([]byte(blob))
		}
		in := text + blob + text
		// base64 of a short secret inside a longer blob is not promised.
		promised := !strings.HasPrefix(name, "base64") || len(v) >= minInnerSecret || prefix == "" && suffix == ""
		// JSON carries no invalid UTF-8 byte: an invalid one is replaced,
		// or joins its neighbour into a rune.
		if strings.HasPrefix(name, "json") && !utf8.ValidString(prefix+v+suffix) {
			promised = false
		}
		if promised && !set.Contains(in) {
			t.Fatalf("Contains(%q) = false: secret %q (%s) not recognised", in, v, name)
		}
		out := set.Redact(in)
		if set.Contains(out) {
			t.Fatalf("Redact(%q) with secret %q (%s) = %q: a form survives", in, v, name, out)
		}
		if strings.Contains(out, v) {
			t.Fatalf("Redact(%q) = %q: the secret survives", in, out)
		}
	})
}
