package discord

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Files the bot sends with a message: a multipart/form-data body whose
// payload_json part is the message payload and whose files[n] parts are
// the files (Discord's "Uploading Files"), as discordgo's
// ChannelMessageSendComplex sends them.

// MaxFileBytes is the largest file the fake takes from a bot: Discord's
// default upload limit (10 MiB since January 2025); a larger one is
// refused with 413, code 40005.
const MaxFileBytes = 10 << 20

// maxRequest bounds a multipart request body.
const maxRequest = 25 << 20

// maxFiles is how many files one message may carry.
const maxFiles = 10

// File is a file the bot sent with a message.
type File struct {
	MessageID   string
	ChannelID   string
	Field       string // the part's name, files[n]
	Name        string // the part's filename
	ContentType string
	Data        []byte
	Content     string // the message's content (the caption)
	At          time.Time
}

// uploadedFile is a file part of a request being handled.
type uploadedFile struct {
	field, name, contentType string
	data                     []byte
}

// Files returns the files the bot sent, in order.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]File(nil), s.files...)
}

// bodyLimit is how many bytes the body of r may hold: more for a
// multipart one, which carries files.
func bodyLimit(r *http.Request) int64 {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		return maxRequest
	}
	return maxBody
}

// RefuseUploads makes every later message with files fail (or, with
// false, succeed again) as Discord refuses one too large: 413 with code
// 40005 "Request entity too large". Nothing is recorded.
func (s *Server) RefuseUploads(refuse bool) { s.refuse.Store(refuse) }

// readMessage reads a message payload: a JSON body, or a multipart one
// with payload_json and files[n].
func readMessage(r *http.Request) (body, *apiError) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return readBody(r)
	}
	tooBig := &apiError{status: http.StatusRequestEntityTooLarge, code: 40005, message: "Request entity too large"}
	mr, err := r.MultipartReader()
	if err != nil {
		return body{}, &apiError{status: http.StatusBadRequest, code: 50109, message: "The request body contains invalid JSON."}
	}
	var raw map[string]json.RawMessage
	var files []uploadedFile
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if strings.Contains(err.Error(), "too large") {
				return body{}, tooBig
			}
			return body{}, &apiError{status: http.StatusBadRequest, code: 50109, message: "The request body contains invalid JSON."}
		}
		data, err := io.ReadAll(io.LimitReader(part, MaxFileBytes+1))
		if err != nil {
			return body{}, tooBig
		}
		switch name := part.FormName(); {
		case name == "payload_json":
			if json.Unmarshal(data, &raw) != nil {
				return body{}, &apiError{status: http.StatusBadRequest, code: 50109, message: "The request body contains invalid JSON."}
			}
		case strings.HasPrefix(name, "files[") && strings.HasSuffix(name, "]"):
			if _, err := strconv.Atoi(name[len("files[") : len(name)-1]); err != nil {
				return body{}, formError("BASE_TYPE_BAD", "Invalid file field.", name)
			}
			if len(data) > MaxFileBytes {
				return body{}, tooBig
			}
			if len(files) == maxFiles {
				return body{}, formError("BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", maxFiles), "files")
			}
			files = append(files, uploadedFile{field: name, name: part.FileName(), contentType: part.Header.Get("Content-Type"), data: data})
		}
	}
	b, e := parseBody(raw)
	b.files = files
	return b, e
}

// storeFilesLocked records the files of m and returns them as its
// attachments.
func (s *Server) storeFilesLocked(m Sent, files []uploadedFile) []Attachment {
	var out []Attachment
	for _, f := range files {
		id := s.newIDLocked()
		s.files = append(s.files, File{MessageID: m.ID, ChannelID: m.ChannelID, Field: f.field, Name: f.name,
			ContentType: f.contentType, Data: f.data, Content: m.Content, At: m.At})
		out = append(out, Attachment{ID: id, Filename: f.name, Size: len(f.data), ContentType: f.contentType,
			URL: s.srv.URL + "/attachments/" + m.ChannelID + "/" + id + "/" + f.name})
	}
	return out
}
