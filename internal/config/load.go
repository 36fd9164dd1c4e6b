package config

import (
	"errors"
	"os"
	"reflect"
	"regexp"
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
	return c, err
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
// gateway table (internal/gatewaytable.Specs): gateways.<name> decodes into
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
			return nil, err
		}
	}
	c.fillDerived()
	if err := c.validate(); err != nil {
		e, _ := errors.AsType[*Error](err)
		e.Line = lineOf(d.lines, e.Key)
		return nil, e
	}
	return c, nil
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
