package telegram

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeBatch checks that a getUpdates result is split into the same
// updates json.Unmarshal finds, and each update's id read as updateID
// reads it, for any valid JSON (the library has decoded the response
// before, so the result is valid; invalid input is skipped).
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[{"update_id":1,"message":{"text":"a,b]}"}}]`,
		`[{"update_id":7},{"update_id":8,"callback_query":{"data":"x\"}]"}}]`,
		`[ {"update_id" : 9 } , {"message":{}} ,{"update_id":-3}, {"update_id":1.5}, {"update_id":99999999999999999999}]`,
		`[{"update_id":5,"update_id":6}]`, `[1,"a",[2,[3]],null,true]`, `{"update_id":1}`, `"x"`, `[[],{}]`,
		`[{"update_id":12,"message":{"text":"\\\\"}}]`, `[{"update_id":4}` + "\n]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		got, err := decodeBatch(b)
		var want []json.RawMessage
		if werr := json.Unmarshal(b, &want); werr != nil {
			if err == nil {
				t.Fatalf("decodeBatch(%q) = %q, json.Unmarshal refuses it: %v", b, got, werr)
			}
			return
		}
		if err != nil {
			t.Fatalf("decodeBatch(%q): %v; json.Unmarshal finds %q", b, err, want)
		}
		if len(got) != len(want) {
			t.Fatalf("decodeBatch(%q) = %q; want %q", b, got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("decodeBatch(%q)[%d] = %q; want %q", b, i, got[i], want[i])
			}
			if bytes.Count(got[i], []byte(`"update_id"`)) > 1 {
				continue // a repeated key: the first is read, encoding/json takes the last
			}
			id, ok := batchUpdateID(got[i])
			wid, wok := updateID(want[i])
			if id != wid || ok != wok {
				t.Fatalf("batchUpdateID(%q) = %d, %v; updateID = %d, %v", got[i], id, ok, wid, wok)
			}
		}
	})
}

// TestPollReadsTheBatchInPlace checks that a batch of updates still in
// progress, which each poll brings back, is split and its ids read
// without copying the updates: decoded with encoding/json it allocated 589
// times for 64 updates.
func TestPollReadsTheBatchInPlace(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[")
	for i := range 64 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"update_id":` + string(rune('1'+i%9)) + `00,"message":{"message_id":3,"chat":{"id":5,"type":"private"},"text":"m-\"1\", {x}"}}`)
	}
	b.WriteString("]")
	result := b.Bytes()
	allocs := testing.AllocsPerRun(20, func() {
		raws, err := decodeBatch(result)
		if err != nil || len(raws) != 64 {
			t.Fatalf("decodeBatch: %d updates, %v", len(raws), err)
		}
		for _, raw := range raws {
			if _, ok := batchUpdateID(raw); !ok {
				t.Fatalf("no id in %q", raw)
			}
		}
	})
	// The slice of updates grows by appending: a few allocations.
	if allocs > 10 {
		t.Fatalf("splitting a batch of 64 updates and reading their ids allocated %.0f times; want at most 10", allocs)
	}
}
