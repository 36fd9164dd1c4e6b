package discord

import (
	"strconv"
	"unicode/utf8"
)

// The component limits Discord enforces.
const (
	MaxRows        = 5   // action rows a message
	MaxRowButtons  = 5   // buttons a row
	MaxCustomID    = 100 // characters of a custom_id
	MaxButtonLabel = 80  // characters of a button label
)

// Component types and the link button style.
const (
	ComponentActionRow = 1
	ComponentButton    = 2
	StyleLink          = 5
)

// checkComponents applies Discord's rules to a message's components: at
// most five action rows of one to five components; a button has a valid
// style and a label; custom_id is 1–100 characters and unique in the
// message (a link button has a url instead).
func checkComponents(rows []Component) *apiError {
	if len(rows) > MaxRows {
		return formError("BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.", "components")
	}
	ids := make(map[string]bool)
	for i, row := range rows {
		at := func(more ...string) []string {
			return append([]string{"components", strconv.Itoa(i)}, more...)
		}
		if row.Type != ComponentActionRow {
			return formError("UNION_TYPE_CHOICES", `Value of field "type" must be one of (1,).`, at("type")...)
		}
		if len(row.Components) < 1 || len(row.Components) > MaxRowButtons {
			return formError("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.", at("components")...)
		}
		for j, c := range row.Components {
			if e := checkComponent(c, ids, at("components", strconv.Itoa(j))); e != nil {
				return e
			}
		}
	}
	return nil
}

func checkComponent(c Component, ids map[string]bool, path []string) *apiError {
	at := func(field string) []string { return append(append([]string(nil), path...), field) }
	switch c.Type {
	case ComponentButton:
		if c.Style < 1 || c.Style > StyleLink {
			return formError("BUTTON_COMPONENT_INVALID_STYLE", "Invalid button style.", at("style")...)
		}
		if c.Label == "" && len(c.Emoji) == 0 {
			return formError("BUTTON_COMPONENT_LABEL_REQUIRED", "A label is required.", at("label")...)
		}
		if utf8.RuneCountInString(c.Label) > MaxButtonLabel {
			return formError("BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.", at("label")...)
		}
		if c.Style == StyleLink {
			if c.URL == "" || c.CustomID != "" {
				return formError("BUTTON_COMPONENT_URL_REQUIRED", "A url is required (and no custom_id) for a link button.", at("url")...)
			}
			return nil
		}
		if c.URL != "" {
			return formError("BUTTON_COMPONENT_URL_NOT_ALLOWED", "A url is only allowed on link buttons.", at("url")...)
		}
	case 3, 5, 6, 7, 8: // select menus
	default:
		return formError("UNION_TYPE_CHOICES", `Value of field "type" must be one of (2, 3, 5, 6, 7, 8).`, at("type")...)
	}
	n := utf8.RuneCountInString(c.CustomID)
	if n < 1 || n > MaxCustomID {
		return formError("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.", at("custom_id")...)
	}
	if ids[c.CustomID] {
		return formError("COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated", at("custom_id")...)
	}
	ids[c.CustomID] = true
	return nil
}
