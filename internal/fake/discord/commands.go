package discord

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// commandName is Discord's rule for command and option names (lower case).
var commandName = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

// MaxOptions is the most options a command (or option) may have.
const MaxOptions = 25

// checkCommand applies Discord's naming and length rules; path prefixes the
// error's field (the index in a bulk overwrite).
func checkCommand(c *Command, path ...string) *apiError {
	at := func(more ...string) []string { return append(slices.Clone(path), more...) }
	if c.Type == 0 {
		c.Type = 1
	}
	if !commandName.MatchString(c.Name) || c.Type == 1 && strings.ToLower(c.Name) != c.Name {
		return formError("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid", at("name")...)
	}
	if n := utf8.RuneCountInString(c.Description); c.Type == 1 && (n < 1 || n > 100) {
		return formError("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.", at("description")...)
	}
	return checkOptions(c.Options, at("options"))
}

func checkOptions(opts []CommandOption, path []string) *apiError {
	if len(opts) > MaxOptions {
		return formError("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.", path...)
	}
	optional := false
	for i, o := range opts {
		at := func(field string) []string { return append(slices.Clone(path), strconv.Itoa(i), field) }
		if !commandName.MatchString(o.Name) || strings.ToLower(o.Name) != o.Name {
			return formError("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid", at("name")...)
		}
		if n := utf8.RuneCountInString(o.Description); n < 1 || n > 100 {
			return formError("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.", at("description")...)
		}
		if o.Type < 1 || o.Type > 11 {
			return formError("ENUM_TYPE_COERCE", "Value is not a valid option type.", at("type")...)
		}
		if o.Required && optional {
			return formError("APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID", "Required options must be placed before non-required options", at("required")...)
		}
		optional = optional || !o.Required
		if e := checkOptions(o.Options, append(slices.Clone(path), strconv.Itoa(i), "options")); e != nil {
			return e
		}
	}
	return nil
}

// commandScope checks the application id and returns the guild id ("" for
// global commands).
func (s *Server) commandScope(r *http.Request) (string, *apiError) {
	if r.PathValue("app") != s.opts.AppID {
		return "", errMissingAccess
	}
	return r.PathValue("guild"), nil
}

func (s *Server) listCommands(w http.ResponseWriter, r *http.Request) {
	guild, e := s.commandScope(r)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, orEmpty(s.Commands(guild)))
}

// putCommands answers the bulk overwrite: the set becomes exactly the
// body's commands; a command keeps its id when its name stays.
func (s *Server) putCommands(w http.ResponseWriter, r *http.Request) {
	guild, e := s.commandScope(r)
	var cmds []Command
	if e == nil {
		e = decode(r, &cmds)
	}
	for i := range cmds {
		if e == nil {
			e = checkCommand(&cmds[i], strconv.Itoa(i))
		}
	}
	if e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	old := s.commands[guild]
	next := make([]Command, 0, len(cmds))
	for _, c := range cmds {
		next = append(next, s.registerLocked(old, guild, c))
	}
	s.commands[guild] = next
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, next)
}

// createCommand answers POST: create, or update the command of that name.
func (s *Server) createCommand(w http.ResponseWriter, r *http.Request) {
	guild, e := s.commandScope(r)
	var c Command
	if e == nil {
		e = decode(r, &c)
	}
	if e == nil {
		e = checkCommand(&c)
	}
	if e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	cmds := s.commands[guild]
	i := slices.IndexFunc(cmds, func(x Command) bool { return x.Name == c.Name })
	c = s.registerLocked(cmds, guild, c)
	status := http.StatusCreated
	if i >= 0 {
		cmds[i], status = c, http.StatusOK
	} else {
		s.commands[guild] = append(cmds, c)
	}
	s.mu.Unlock()
	writeJSON(w, status, c)
}

// registerLocked fills in the fields Discord assigns, keeping the id of
// the command of the same name in old.
func (s *Server) registerLocked(old []Command, guild string, c Command) Command {
	c.ID, c.ApplicationID, c.GuildID, c.Version = "", s.opts.AppID, guild, s.newIDLocked()
	if i := slices.IndexFunc(old, func(x Command) bool { return x.Name == c.Name }); i >= 0 {
		c.ID = old[i].ID
	} else {
		c.ID = s.newIDLocked()
	}
	return c
}

// Commands returns the application commands registered for guild ("" for
// the global ones).
func (s *Server) Commands(guild string) []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands[guild])
}
