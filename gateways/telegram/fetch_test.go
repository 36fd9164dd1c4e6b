package telegram

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

func TestFilePath(t *testing.T) {
	for in, want := range map[string]string{
		"documents/file_1.txt": "documents/file_1.txt",
		"photos/a b?.jpg":      "photos/a%20b%3F.jpg",
	} {
		if got, err := filePath(in); err != nil || got != want {
			t.Errorf("filePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../../b", "a//b", "./a"} {
		if got, err := filePath(bad); err == nil {
			t.Errorf("filePath(%q) = %q, want an error", bad, got)
		}
	}
}

func TestLargestPhotoWithinMax(t *testing.T) {
	sizes := []tgbotapi.PhotoSize{
		{FileID: "s", Width: 90, Height: 90, FileSize: 1000},
		{FileID: "m", Width: 320, Height: 320, FileSize: 20000},
		{FileID: "l", Width: 1280, Height: 1280, FileSize: 300000},
	}
	for max, want := range map[int64]string{1 << 20: "l", 100000: "m", 1000: "s", 10: "s"} {
		if p, ok := largestPhoto(sizes, max); !ok || p.FileID != want {
			t.Errorf("max %d: %q, want %q", max, p.FileID, want)
		}
	}
	if _, ok := largestPhoto(nil, 10); ok {
		t.Error("no sizes gave a photo")
	}
}

// TestFetchErrorsHoldNoToken: a file host that drops the connection, or
// answers an error, makes Fetch fail with an error that holds neither the
// token nor the file URL; a file getFile announces over max is not
// downloaded.
func TestFetchErrorsHoldNoToken(t *testing.T) {
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/getMe"):
			w.Write([]byte(`{"ok":true,"result":{"id":1,"is_bot":true,"first_name":"b","username":"b"}}`))
		case strings.HasSuffix(r.URL.Path, "/getFile"):
			r.ParseForm()
			size := "3"
			if r.Form.Get("file_id") == "huge" {
				size = "999999"
			}
			w.Write([]byte(`{"ok":true,"result":{"file_id":"x","file_unique_id":"u","file_size":` + size + `,"file_path":"documents/` + r.Form.Get("file_id") + `"}}`))
		case strings.HasSuffix(r.URL.Path, "/documents/drop"):
			downloads.Add(1)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			downloads.Add(1)
			http.Error(w, "gone", http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	g, err := New(context.Background(), Config{Token: testToken, APIURL: srv.URL}, Deps{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"drop", "status"} {
		err := fileFetcher{g: g, fileID: id}.Fetch(context.Background(), &bytes.Buffer{}, 100)
		if err == nil {
			t.Fatalf("%s: no error", id)
		}
		assertNoToken(t, err.Error())
		if strings.Contains(err.Error(), "/file/bot") {
			t.Errorf("%s: the file URL is in the error: %v", id, err)
		}
	}
	before := downloads.Load()
	err = fileFetcher{g: g, fileID: "huge"}.Fetch(context.Background(), &bytes.Buffer{}, 100)
	if !errors.Is(err, core.ErrTooBig) || downloads.Load() != before {
		t.Errorf("over max: %v, %d downloads", err, downloads.Load()-before)
	}
}
