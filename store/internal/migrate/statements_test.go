package migrate

import (
	"slices"
	"strings"
	"testing"
)

// TestStatements: the cases goose's parser distinguishes, split as goose
// splits them.
func TestStatements(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string
		err        string
	}{
		{"simple", "-- +goose Up\n-- note\n\nCREATE TABLE a (x INTEGER);\nCREATE TABLE b (\n  y TEXT -- why;\n);\n",
			[]string{"CREATE TABLE a (x INTEGER);", "CREATE TABLE b (\n  y TEXT -- why;\n);"}, ""},
		{"comment before Up", "-- header\n\n-- +goose Up\nSELECT 1;\n", []string{"SELECT 1;"}, ""},
		{"trailing comment", "-- +goose Up\nSELECT 1; -- one\nSELECT 2;\t--two;x\n", []string{"SELECT 1; -- one", "SELECT 2;\t--two;x"}, ""},
		{"block", "-- +goose Up\n-- +goose StatementBegin\nCREATE FUNCTION f() AS $$ BEGIN x; y; END $$;\n-- +goose StatementEnd\nSELECT 1;\n",
			[]string{"CREATE FUNCTION f() AS $$ BEGIN x; y; END $$;", "SELECT 1;"}, ""},
		{"down ignored", "-- +goose Up\nSELECT 1;\n-- +goose Down\nDROP TABLE a;\n", []string{"SELECT 1;"}, ""},
		{"no Up", "SELECT 1;\n", nil, "want -- +goose Up"},
		{"empty", "", nil, "want -- +goose Up"},
		{"no semicolon", "-- +goose Up\nSELECT 1\n", nil, "has no ';'"},
		{"no semicolon before Down", "-- +goose Up\nSELECT 1\n-- +goose Down\n", nil, "has no ';'"},
		{"open block", "-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n", nil, "without -- +goose StatementEnd"},
		{"no transaction", "-- +goose NO TRANSACTION\n-- +goose Up\nSELECT 1;\n", nil, "not supported"},
	} {
		got, err := Statements(tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v; want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: Statements = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
