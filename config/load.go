package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and parses the configuration file at path; see Parse. Every
// error is an *Error naming the file.
func Load(path string, lookupEnv func(string) (string, bool), table []GatewaySpec) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + readReason(err), err: err}
	}
	c, err := Parse(data, lookupEnv, table)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = path
	}
	if err != nil {
		return nil, err
	}
	if err := c.resolvePaths(filepath.Dir(path)); err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			e.File = path
			return nil, e
		}
		return nil, &Error{File: path, Msg: err.Error(), err: err}
	}
	return c, nil
}

// resolvePaths makes the relative paths in the configuration, tools.workspace
// and the sqlite store.dsn, relative to dir, the configuration file's
// directory, rather than to the working directory: `bot -config
// /etc/gatehouse/config.yaml` run from / uses /etc/gatehouse/gatehouse.db,
// not /gatehouse.db. The result is absolute.
func (c *Config) resolvePaths(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("config directory: %w", err)
	}
	if !filepath.IsAbs(c.Tools.Workspace) {
		c.Tools.Workspace = filepath.Join(dir, c.Tools.Workspace)
	}
	if c.Store.Driver == "sqlite" {
		c.Store.DSN = Secret(resolveSQLite(dir, c.Store.DSN.Value()))
	}
	return c.Skills.resolve(dir, c.Tools.Workspace)
}

// resolveSQLite resolves a relative file path in a sqlite DSN, a plain path
// or a "file:" URI, either with a query, against dir. In-memory names stay.
func resolveSQLite(dir, dsn string) string {
	base, query, hasQuery := strings.Cut(dsn, "?")
	uri, isURI := strings.CutPrefix(base, "file:")
	if !isURI {
		uri = base
	}
	if uri == "" || uri == ":memory:" || filepath.IsAbs(uri) || (isURI && strings.HasPrefix(uri, "/")) {
		return dsn
	}
	p := filepath.Join(dir, uri)
	if isURI {
		p = "file:" + p
	}
	if hasQuery {
		p += "?" + query
	}
	return p
}

// readReason is the os error without the path it repeats.
func readReason(err error) string {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse decodes a YAML configuration. ${VAR} and ${VAR:-default} in values
// expand from lookupEnv (os.LookupEnv when nil); $$ is a literal $. Absent
// keys keep their defaults (Default). Every error is an *Error naming the
// key path and line. An empty document yields the defaults. table is the
// gateway table (app/gatewaytable.Specs): gateways.<name> decodes into
// its entry's section, and any other name under gateways is an unknown key.
func Parse(data []byte, lookupEnv func(string) (string, bool), table []GatewaySpec) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	text, refs := protectRefs(data)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, syntaxError(err)
	}
	restoreRefs(&doc, refs)
	c := Default(table)
	d := &decoder{lookup: lookupEnv, lines: map[string]int{}}
	if len(doc.Content) > 0 {
		if err := d.decode(doc.Content[0], reflect.ValueOf(c).Elem(), ""); err != nil {
			return nil, d.hideExpanded(err)
		}
	}
	c.fillDerived()
	if err := c.validate(); err != nil {
		e, _ := errors.AsType[*Error](err)
		e.Line = lineOf(d.lines, e.Key)
		if vars := d.unset[e.Key]; len(vars) > 0 {
			e.Msg += " (" + unsetVars(vars) + ")"
		}
		return nil, d.hideExpanded(e)
	}
	return c, nil
}

// minHidden is the shortest expanded value an error hides: a shorter one
// ("80", "true") is no secret, and replacing it could garble the message.
const minHidden = 6

// hideExpanded rewrites err's message so that every value ${VAR}
// expansion produced shows as it is written in the file ("${TOKEN}"),
// whole or as an error quoted it, cut.
func (d *decoder) hideExpanded(err error) error {
	e, ok := errors.AsType[*Error](err)
	if !ok || len(d.expanded) == 0 {
		return err
	}
	values := make([]string, 0, len(d.expanded))
	for v := range d.expanded {
		values = append(values, v)
	}
	// Longest first: a value that holds another is replaced whole.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		written := d.expanded[v]
		if r := []rune(v); len(r) > maxQuoted {
			e.Msg = strings.ReplaceAll(e.Msg, string(r[:maxQuoted])+"…", written)
		}
		e.Msg = strings.ReplaceAll(e.Msg, v, written)
	}
	return e
}

// unsetVars says which ${VAR}s left a value empty.
func unsetVars(vars []string) string {
	refs := make([]string, len(vars))
	for i, v := range vars {
		refs[i] = "${" + v + "}"
	}
	verb := "is"
	if len(refs) > 1 {
		verb = "are"
	}
	return strings.Join(refs, ", ") + " " + verb + " unset or empty in the environment"
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError turns a YAML parser error into an *Error with its line.
func syntaxError(err error) error {
	msg := err.Error()
	e := &Error{Msg: "YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "YAML: " + msg[len(m[0]):]
	}
	return e
}

// lineOf returns the line of key, or of its nearest ancestor that was in
// the file (a required key's parent), or 0.
func lineOf(lines map[string]int, key string) int {
	for key != "" {
		if l, ok := lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			return 0
		}
		key = key[:i]
	}
	return 0
}
