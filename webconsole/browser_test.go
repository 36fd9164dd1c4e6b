package webconsole_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// browser starts a headless Chromium for the test, or skips when there
// is none outside CI (CI installs Debian's chromium: .ci/run).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium on PATH in CI: .ci/run installs Debian's chromium")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium): the browser test of the web console is skipped")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(bctx); err != nil { // starts the browser, on a context without a deadline
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// artefacts is where the test keeps what CI keeps (.ci/run sets
// GATEHOUSE_TEST_ARTIFACTS), else a temporary directory.
func artefacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GATEHOUSE_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rendered reports whether a screenshot shows a page: not one colour, and
// a fair share of it not the background.
func rendered(t *testing.T, shot []byte) (w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	colours, other := map[[4]uint32]bool{}, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := img.At(x, y)
			r, g, bl, a := c.RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
			if c != bg {
				other++
			}
		}
	}
	if len(colours) < 8 || other < b.Dx()*b.Dy()/4/100 {
		t.Errorf("the screenshot looks blank: %d colours, %d pixels of %d not the background", len(colours), other, b.Dx()*b.Dy()/4)
	}
	return b.Dx(), b.Dy()
}

// linkIn finds the sign-in link the fake Telegram got for chat.
func linkIn(tg *faketg.Server, chat int64, from int) (string, bool) {
	for _, s := range tg.Sent()[from:] {
		if m := regexp.MustCompile(`http://\S+/web/signin\?t=[0-9a-f]{64}`).FindString(s.Plain); m != "" && s.ChatID == chat {
			return m, true
		}
	}
	return "", false
}

// attackerPage is another origin's page that posts an approval as soon
// as it opens; at /link, a page with a link to target, as a chat app's.
func attackerPage(target string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/link" {
			fmt.Fprintf(w, `<!doctype html><a id="l" href="%s">the request</a>`, target)
			return
		}
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s"><input name="decision" value="approve"></form>
<script>document.getElementById("f").submit()</script>`, target)
	}))
}

// waitText waits until the page's body contains want.
func waitText(t *testing.T, ctx context.Context, want string) string {
	t.Helper()
	var body, last string
	testutil.WaitFor(t, "the page to say "+want, func() bool {
		var err error
		body, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if body != last {
			t.Logf("the page says: %.300q", body)
			last = body
		}
		return err == nil && strings.Contains(body, want)
	})
	return body
}
