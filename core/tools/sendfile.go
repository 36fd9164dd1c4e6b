package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// MaxSendBytes caps what send_file reads of one file whatever the
// platform takes (up to a gigabyte on some): the whole file is held in
// memory while it is checked for secrets and sent. It is the largest
// limit of the other platforms.
const MaxSendBytes = 50 << 20

// MaxCaption is the longest caption send_file takes, in UTF-16 units:
// the smallest of the platforms' caption limits.
const MaxCaption = 1024

// sendFileTimeout bounds one send_file: longer than the registry's
// default, since a large upload that is rate limited waits within the
// delivery layer's retry deadline (5 minutes by default).
const sendFileTimeout = 6 * time.Minute

// convKey is the context key of the conversation a tool call belongs to.
type convKey struct{}

// withConversation returns ctx carrying conv, the conversation of the
// call being run (Registry.Act sets it).
func withConversation(ctx context.Context, conv core.Conversation) context.Context {
	return context.WithValue(ctx, convKey{}, conv)
}

// conversationOf returns the conversation of the call ctx runs, if any.
func conversationOf(ctx context.Context) (core.Conversation, bool) {
	conv, ok := ctx.Value(convKey{}).(core.Conversation)
	return conv, ok && conv.Gateway != ""
}

// sendFile is the send_file tool.
type sendFile struct {
	ws      *Workspace
	senders core.FileSenders
	secrets *secrets.Set
}

// NewSendFile returns the send_file tool: it sends a regular file of the
// workspace, with an optional caption, to the conversation of the call,
// through that conversation's gateway (found in senders; nil sends
// nothing). It refuses, with a reason the model reads, a path outside the
// workspace (a symbolic link out included), anything but a regular file
// (never waiting on a FIFO), a file over the platform's limit (checked
// before reading), a file or caption holding one of sec's secrets in any
// form the redaction knows, and a caption over MaxCaption. It changes
// nothing in the workspace: it is ReadOnly.
func NewSendFile(ws *Workspace, senders core.FileSenders, sec *secrets.Set) Tool {
	return sendFile{ws: ws, senders: senders, secrets: sec}
}

// Spec describes send_file.
func (sendFile) Spec() Spec {
	return Spec{
		Name:        "send_file",
		Description: "Send a workspace file to this chat (images as photos).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},` +
			`"caption":{"type":"string"}},"required":["path"]}`),
		ReadOnly: true,
		Timeout:  sendFileTimeout,
	}
}

// sendArgs is send_file's arguments object.
type sendArgs struct {
	Path    string `json:"path"`
	Caption string `json:"caption"`
}

// Run checks the file and hands it to the conversation's gateway.
func (t sendFile) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a sendArgs
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	conv, ok := conversationOf(ctx)
	if !ok {
		return "", errors.New("send_file: this call belongs to no conversation; there is nowhere to send the file")
	}
	var sender core.FileSender
	if t.senders != nil {
		sender, ok = t.senders.FileSender(conv.Gateway)
	}
	if sender == nil || !ok {
		return "", fmt.Errorf("send_file: the %s gateway cannot send files", conv.Gateway)
	}
	if n := len(utf16.Encode([]rune(a.Caption))); n > MaxCaption {
		return "", fmt.Errorf("send_file: the caption is %d characters long; at most %d are sent with a file (send the rest as your reply)", n, MaxCaption)
	}
	if t.secrets.Leaks(a.Caption) {
		return "", errors.New("send_file: the caption contains a secret (a token or API key); secrets may not leave the bot")
	}
	limit := min(sender.MaxFileBytes(), MaxSendBytes)
	root, path, err := t.ws.open(a.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	data, err := readForSend(root, path, a.Path, conv.Gateway, limit)
	if err != nil {
		return "", err
	}
	if t.secrets.Contains(string(data)) {
		return "", fmt.Errorf("send_file: %q holds one of the bot's secrets (a token or key, or an encoded form of one); it is not sent", a.Path)
	}
	f := core.OutgoingFile{
		Name:      outName(path),
		Path:      path,
		MediaType: http.DetectContentType(data),
		Data:      data,
		Caption:   a.Caption,
	}
	if err := sender.SendFile(ctx, conv, f); err != nil {
		return "", fmt.Errorf("send_file: %q was not delivered: %w", a.Path, err)
	}
	return fmt.Sprintf("sent %s (%s, %s) to this conversation", path, sizeText(int64(len(data))), f.MediaType), nil
}

// readForSend reads the regular file at path of root, refusing anything
// else and a file longer than limit (named by its size first, before any
// read, then again while reading: it may grow meanwhile). shown is the
// path as the model gave it; gateway names the platform in the refusal.
func readForSend(root *os.Root, path, shown, gateway string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathErr(shown, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, pathErr(shown, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("send_file: %q is not a regular file (%s)", shown, info.Mode().Type())
	}
	tooBig := func(size string) error {
		return fmt.Errorf("send_file: %q is %s; %s takes files of at most %s from the bot", shown, size, gateway, exactSize(limit))
	}
	if info.Size() > limit {
		return nil, tooBig(exactSize(info.Size()))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, pathErr(shown, err)
	}
	if int64(len(data)) > limit {
		return nil, tooBig("more than " + exactSize(limit))
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("send_file: %q is empty; there is nothing to send", shown)
	}
	return data, nil
}

// maxOutName is the longest file name send_file gives a platform, in
// bytes.
const maxOutName = 200

// outName is the name the recipient sees: path's last element, every
// control, format or other invisible character replaced by '_', at most
// maxOutName bytes (the extension kept).
func outName(path string) string {
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (!unicode.IsGraphic(r) && r != ' ') {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(filepath.Base(path), "_"))
	if len(name) <= maxOutName {
		return name
	}
	ext := filepath.Ext(name)
	if len(ext) > 16 {
		ext = ""
	}
	keep := maxOutName - len(ext)
	return name[:runeStart(name, keep)] + ext
}

// exactSize writes n bytes in a binary unit and, when that rounds, in
// bytes too: "10 MiB (10485761 bytes)".
func exactSize(n int64) string {
	if n < 1<<10 {
		return sizeText(n)
	}
	return fmt.Sprintf("%s (%d bytes)", sizeText(n), n)
}

// sizeText writes n bytes in the largest binary unit under it.
func sizeText(n int64) string {
	unit := func(d float64, u string) string {
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/d, 'f', 1, 64), ".0") + " " + u
	}
	switch {
	case n >= 1<<30:
		return unit(1<<30, "GiB")
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
