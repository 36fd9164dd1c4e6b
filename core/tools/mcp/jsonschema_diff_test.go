package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// readDifferently are the keywords the two validators read differently
// on purpose: format is an annotation here, unevaluated* are read
// leniently, and draft-07's forms are read here only.
var readDifferently = []string{`"format"`, `"unevaluated`, `"items":[`, `"additionalItems"`, `"dependencies"`,
	`"exclusiveMinimum":true`, `"exclusiveMaximum":true`, `"exclusiveMinimum":false`, `"exclusiveMaximum":false`,
	`"$id"`, `"$anchor"`, `"$dynamic`, `"$recursive`, `"$schema"`, `"definitions"`, `"multipleOf"`}

// FuzzValidatorAgreesWithJSONSchemaGo: on schemas both accept, the
// validator that replaced jsonschema-go in the product (which the tests
// still have) gives the same verdict on the same arguments.
func FuzzValidatorAgreesWithJSONSchemaGo(f *testing.F) {
	for _, c := range [][2]string{
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"]}`, `{"a":1}`},
		{`{"properties":{"a":{"anyOf":[{"type":"string","pattern":"^x"},{"type":"array","items":{"enum":[1,2]}}]}}}`, `{"a":[1,3]}`},
		{`{"properties":{"a":{"oneOf":[{"minLength":2},{"maxLength":3}]}}}`, `{"a":"ab"}`},
		{`{"additionalProperties":false,"patternProperties":{"^b":{"type":"boolean"}},"properties":{"a":{"const":null}}}`, `{"a":null,"bx":1}`},
		{`{"properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}}}`, `{"a":[[],[[]]]}`},
		{`{"properties":{"a":{"if":{"type":"number"},"then":{"maximum":3},"else":{"not":{"type":"null"}}}}}`, `{"a":null}`},
		{`{"properties":{"a":{"contains":{"type":"string"},"minContains":2,"uniqueItems":true}}}`, `{"a":["x","y",1]}`},
		{`{"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"maxProperties":2}},"propertyNames":{"pattern":"^[ab]"}}`, `{"a":1,"b":2}`},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		if strings.ToLower(schema) != schema { // jsonschema-go reads "tYpe" as "type"
			return
		}
		for _, k := range readDifferently {
			if strings.Contains(schema, k) {
				return
			}
		}
		var root, v any
		if json.Unmarshal([]byte(schema), &root) != nil || json.Unmarshal([]byte(args), &v) != nil {
			return
		}
		var theirs jsonschema.Schema
		if json.Unmarshal([]byte(schema), &theirs) != nil {
			return
		}
		resolved, err := theirs.Resolve(nil)
		if err != nil {
			return
		}
		_, ours, err := convertSchema(root)
		if err != nil || tooDeep(v, MaxArgsDepth) {
			return
		}
		if _, err := ours.cost(t.Context(), v); err != nil {
			return
		}
		errTheirs, errOurs := resolved.Validate(v), ours.check(ours.root, v, "")
		if (errTheirs == nil) != (errOurs == nil) {
			t.Fatalf("%s against %s: jsonschema-go %v, ours %v", args, schema, errTheirs, errOurs)
		}
	})
}
