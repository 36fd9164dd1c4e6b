package dotenv

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFormatThenParse(t *testing.T) {
	entries := []Entry{
		{Name: "TELEGRAM_BOT_TOKEN", Value: "123456:AA-bb_cc"},
		{Name: "OPENAI_API_KEY", Value: "sk-with space$and\"dq"},
		{Name: "EMPTY", Value: ""},
	}
	data, err := Format("written by bot init\nsecond line", entries)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# written by bot init\n# second line\n") {
		t.Errorf("header: %q", data)
	}
	if !strings.Contains(string(data), "TELEGRAM_BOT_TOKEN=123456:AA-bb_cc\n") || !strings.Contains(string(data), "OPENAI_API_KEY='sk-with space$and\"dq'\n") {
		t.Errorf("quoting: %q", data)
	}
	got, err := Parse("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, entries) {
		t.Errorf("round trip: got %q, want %q", got, entries)
	}
	for _, bad := range []string{"a'b", "a\nB=c", "a\x1bb"} {
		if _, err := Format("", []Entry{{Name: "K", Value: bad}}); err == nil {
			t.Errorf("Format accepted the value %q", bad)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("the error shows the value: %v", err)
		}
	}
}

func TestParse(t *testing.T) {
	got, err := Parse("f", []byte("# c\n\nexport A=1\n B = \"two words\" \nC='x'\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"A", "1"}, {"B", "two words"}, {"C", "x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = Parse("f", []byte("A=1\nsecret-value-no-name\n"))
	if err == nil || !strings.Contains(err.Error(), "f:2") || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("a bad line: %v; want an error naming f:2 and not the line", err)
	}
}

func TestLookupPrefersTheEnvironment(t *testing.T) {
	env := func(n string) (string, bool) {
		if n == "A" {
			return "from-env", true
		}
		return "", false
	}
	l := Lookup(env, []Entry{{"A", "from-file"}, {"B", "b"}})
	if v, _ := l("A"); v != "from-env" {
		t.Errorf("A = %q", v)
	}
	if v, ok := l("B"); !ok || v != "b" {
		t.Errorf("B = %q %v", v, ok)
	}
	if _, ok := l("C"); ok {
		t.Error("C found")
	}
}

func TestWriteFileMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, Name)
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if e, _ := Read(p); len(e) != 1 || e[0].Value != "1" {
		t.Errorf("read back %q", e)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if e, err := Read(filepath.Join(dir, "none")); e != nil || err != nil {
		t.Errorf("a missing file: %v %v", e, err)
	}
}
