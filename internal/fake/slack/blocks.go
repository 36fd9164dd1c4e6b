package slack

import (
	"encoding/json"
	"unicode/utf8"
)

// Slack's limits the fake enforces.
const (
	MaxText        = 40000 // characters of a message's text
	MaxBlocks      = 50    // blocks in a message
	MaxSectionText = 3000  // characters of a section block's text
	MaxFieldText   = 2000  // characters of one section field
	MaxButtonValue = 2000  // characters of a button's value
	MaxButtonText  = 75    // characters of a button's label
	MaxElements    = 25    // elements of an actions block
)

// textObject is a Block Kit text object.
type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// element is a block element; only buttons are looked into.
type element struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Text     json.RawMessage `json:"text"` // a text object for buttons, a string in context blocks
	Value    string          `json:"value"`
	Style    string          `json:"style"`
}

// label returns a button's text, or "" when it has none.
func (e element) label() string {
	var t textObject
	if json.Unmarshal(e.Text, &t) != nil {
		return ""
	}
	return t.Text
}

// block is a layout block with the fields the limits concern.
type block struct {
	Type      string       `json:"type"`
	BlockID   string       `json:"block_id"`
	Text      *textObject  `json:"text"`
	Fields    []textObject `json:"fields"`
	Accessory *element     `json:"accessory"`
	Elements  []element    `json:"elements"`
}

// checkBlocks reports whether raw is a blocks array Slack would accept.
func checkBlocks(raw string) bool {
	var blocks []block
	if json.Unmarshal([]byte(raw), &blocks) != nil || len(blocks) > MaxBlocks {
		return false
	}
	for _, b := range blocks {
		if !b.valid() {
			return false
		}
	}
	return true
}

func (b block) valid() bool {
	if b.Type == "" {
		return false
	}
	if b.Type == "section" {
		if b.Text == nil && len(b.Fields) == 0 {
			return false
		}
		if b.Text != nil && utf8.RuneCountInString(b.Text.Text) > MaxSectionText {
			return false
		}
		for _, f := range b.Fields {
			if utf8.RuneCountInString(f.Text) > MaxFieldText {
				return false
			}
		}
	}
	if b.Type == "actions" && (len(b.Elements) == 0 || len(b.Elements) > MaxElements) {
		return false
	}
	if b.Accessory != nil && !b.Accessory.valid() {
		return false
	}
	for _, e := range b.Elements {
		if !e.valid() {
			return false
		}
	}
	return true
}

func (e element) valid() bool {
	if e.Type != "button" {
		return e.Type != ""
	}
	label := e.label()
	return label != "" && utf8.RuneCountInString(label) <= MaxButtonText &&
		utf8.RuneCountInString(e.Value) <= MaxButtonValue
}

// buttons returns the buttons of raw's actions blocks and section
// accessories, in order; nil for no or malformed blocks.
func buttons(raw json.RawMessage) []Button {
	var blocks []block
	if len(raw) == 0 || json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []Button
	add := func(blockID string, e element) {
		if e.Type != "button" {
			return
		}
		out = append(out, Button{BlockID: blockID, ActionID: e.ActionID, Text: e.label(), Value: e.Value, Style: e.Style})
	}
	for _, b := range blocks {
		if b.Accessory != nil {
			add(b.BlockID, *b.Accessory)
		}
		if b.Type == "actions" {
			for _, e := range b.Elements {
				add(b.BlockID, e)
			}
		}
	}
	return out
}
