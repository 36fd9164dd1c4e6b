package slack

import "testing"

// TestFilesOrigin: Slack's own api_url fetches files from files.slack.com;
// any other (a proxy, the fake) from its own scheme and host.
func TestFilesOrigin(t *testing.T) {
	for in, want := range map[string]string{
		DefaultAPIURL:                  DefaultFilesURL,
		"http://127.0.0.1:8080/api/":   "http://127.0.0.1:8080",
		"https://proxy.example/slack/": "https://proxy.example",
	} {
		u, err := filesOrigin(in)
		if err != nil || u.String() != want {
			t.Errorf("filesOrigin(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

func TestLoginPage(t *testing.T) {
	for _, tc := range []struct {
		contentType, announced string
		want                   bool
	}{
		{"text/html; charset=utf-8", "application/pdf", true},
		{"text/html", "text/html", false},
		{"application/octet-stream", "application/pdf", false},
	} {
		if got := loginPage(tc.contentType, tc.announced); got != tc.want {
			t.Errorf("loginPage(%q, %q) = %v", tc.contentType, tc.announced, got)
		}
	}
}
