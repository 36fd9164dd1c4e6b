package mcp

import (
	"encoding/json"
	"testing"
)

// TestValidatorKeywords: the validator that replaced jsonschema-go's
// checks each keyword tools use, each way.
func TestValidatorKeywords(t *testing.T) {
	for _, tc := range []struct {
		schema, ok, bad string
	}{
		{`{"properties":{"a":{"type":"string"}}}`, `{"a":"x"}`, `{"a":1}`},
		{`{"properties":{"a":{"type":["string","null"]}}}`, `{"a":null}`, `{"a":true}`},
		{`{"properties":{"a":{"type":"integer"}}}`, `{"a":2.0}`, `{"a":2.5}`},
		{`{"properties":{"a":{"type":"number","minimum":1,"maximum":3}}}`, `{"a":3}`, `{"a":0.5}`},
		{`{"properties":{"a":{"exclusiveMinimum":1,"exclusiveMaximum":3}}}`, `{"a":2}`, `{"a":3}`},
		{`{"properties":{"a":{"minimum":1,"exclusiveMinimum":true}}}`, `{"a":1.5}`, `{"a":1}`},
		{`{"properties":{"a":{"multipleOf":0.5}}}`, `{"a":2.5}`, `{"a":2.3}`},
		{`{"properties":{"a":{"minLength":2,"maxLength":3}}}`, `{"a":"éé"}`, `{"a":"éééé"}`},
		{`{"properties":{"a":{"pattern":"^[a-z]+$"}}}`, `{"a":"abc"}`, `{"a":"ab1"}`},
		{`{"properties":{"a":{"enum":["x",1,{"k":[1]}]}}}`, `{"a":{"k":[1.0]}}`, `{"a":"y"}`},
		{`{"properties":{"a":{"const":{"b":1,"a":2}}}}`, `{"a":{"a":2,"b":1}}`, `{"a":{"a":2}}`},
		{`{"required":["a"]}`, `{"a":null}`, `{}`},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, `{"b":1}`},
		{`{"additionalProperties":{"type":"string"}}`, `{"b":"x"}`, `{"b":1}`},
		{`{"patternProperties":{"^x_":{"type":"integer"}},"additionalProperties":false}`, `{"x_a":1}`, `{"x_a":"s"}`},
		{`{"propertyNames":{"maxLength":2}}`, `{"ab":1}`, `{"abc":1}`},
		{`{"minProperties":1,"maxProperties":1}`, `{"a":1}`, `{"a":1,"b":2}`},
		{`{"dependentRequired":{"a":["b"]}}`, `{"a":1,"b":2}`, `{"a":1}`},
		{`{"dependencies":{"a":{"required":["c"]}}}`, `{"a":1,"c":2}`, `{"a":1}`},
		{`{"properties":{"a":{"items":{"type":"string"},"minItems":1,"maxItems":2}}}`, `{"a":["x"]}`, `{"a":["x",1]}`},
		{`{"properties":{"a":{"prefixItems":[{"type":"string"}],"items":false}}}`, `{"a":["x"]}`, `{"a":["x","y"]}`},
		{`{"properties":{"a":{"items":[{"type":"string"}],"additionalItems":{"type":"integer"}}}}`, `{"a":["x",1]}`, `{"a":["x","y"]}`},
		{`{"properties":{"a":{"uniqueItems":true}}}`, `{"a":[1,2]}`, `{"a":[{"x":1},{"x":1.0}]}`},
		{`{"properties":{"a":{"contains":{"const":3},"maxContains":1}}}`, `{"a":[1,3]}`, `{"a":[3,3]}`},
		{`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"a":1}`, `{"a":1.5}`},
		{`{"properties":{"a":{"oneOf":[{"type":"integer"},{"type":"number"}]}}}`, `{"a":1.5}`, `{"a":1}`},
		{`{"properties":{"a":{"allOf":[{"minimum":1},{"maximum":2}]}}}`, `{"a":2}`, `{"a":3}`},
		{`{"properties":{"a":{"not":{"type":"string"}}}}`, `{"a":1}`, `{"a":"s"}`},
		{`{"properties":{"a":{"if":{"type":"string"},"then":{"minLength":2},"else":{"minimum":5}}}}`, `{"a":"ab"}`, `{"a":4}`},
		{`{"properties":{"a":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`, `{"a":"s"}`, `{"a":1}`},
		{`{"properties":{"a":{"$ref":"#/definitions/p"}},"definitions":{"p":{"type":"string"}}}`, `{"a":"s"}`, `{"a":1}`},
		{`{"properties":{"a":{}},"allOf":[{"properties":{"b":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":2}`, `{"c":1}`},
		{`{"properties":{"a":{"prefixItems":[{}],"unevaluatedItems":false}}}`, `{"a":[1]}`, `{"a":[1,2]}`},
		{`{"properties":{"a":false}}`, `{}`, `{"a":1}`},
	} {
		var root any
		if err := json.Unmarshal([]byte(tc.schema), &root); err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		_, s, err := convertSchema(root)
		if err != nil {
			t.Errorf("%s refused: %v", tc.schema, err)
			continue
		}
		for _, c := range []struct {
			args string
			ok   bool
		}{{tc.ok, true}, {tc.bad, false}} {
			v, err := decodeArgs(json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(v); (err == nil) != c.ok {
				t.Errorf("%s against %s: %v; want ok %v", c.args, tc.schema, err, c.ok)
			}
		}
	}
}

// TestMalformedSchemaRefused: a schema whose keywords do not hold what
// the validator reads keeps the tool out, as jsonschema-go's Resolve did.
func TestMalformedSchemaRefused(t *testing.T) {
	for _, s := range []string{
		`{"required":"a"}`,
		`{"properties":{"a":5}}`,
		`{"properties":{"a":{"pattern":"("}}}`,
		`{"patternProperties":{"(":{}}}`,
		`{"properties":{"a":{"minLength":-1}}}`,
		`{"properties":{"a":{"type":7}}}`,
		`{"allOf":{"type":"object"}}`,
		`{"properties":{"a":{"items":[{"minimum":"1"}]}}}`,
		`{"properties":{"a":{"$ref":5}}}`,
	} {
		var root any
		if err := json.Unmarshal([]byte(s), &root); err != nil {
			t.Fatal(err)
		}
		if _, _, err := convertSchema(root); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}
