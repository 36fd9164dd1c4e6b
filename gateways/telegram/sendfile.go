package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
)

// The sizes of the files a bot may send, as the Bot API documents them:
// 50 MB with sendDocument, 10 MB with sendPhoto.
const (
	maxDocument = 50 << 20
	maxPhoto    = 10 << 20
)

// errPhoto marks an attempt whose photo Telegram refused (its dimensions,
// its format): the next attempt sends the file as a document.
var errPhoto = errors.New("telegram refused the photo")

var _ core.FileSender = (*Gateway)(nil)

// MaxFileBytes is the largest document a bot may send.
func (g *Gateway) MaxFileBytes() int64 { return maxDocument }

// SendFile sends f to conv, into its forum topic: a JPEG or PNG of at most
// 10 MB with sendPhoto (shown as a picture), anything else with
// sendDocument; a photo Telegram refuses goes again, at once, as a
// document. It is one multipart request through the delivery layer (in
// order with the chat's replies, paced, a 429 waited out, retried within
// the deadline). The caption is plain text.
func (g *Gateway) SendFile(ctx context.Context, conv core.Conversation, f core.OutgoingFile) error {
	chat, err := chatID(conv)
	if err != nil {
		return err
	}
	thread, err := threadID(conv)
	if err != nil {
		return err
	}
	pace := conv
	pace.Chat = strconv.FormatInt(chat, 10) // one pacing key per chat
	photo := (f.MediaType == "image/jpeg" || f.MediaType == "image/png") && len(f.Data) <= maxPhoto
	err = g.out.File(ctx, pace, func(ctx context.Context) error {
		method, field := "sendDocument", "document"
		if photo {
			method, field = "sendPhoto", "photo"
		}
		to := g.follow(chat)
		p := tgbotapi.Params{"chat_id": strconv.FormatInt(to, 10)}
		p.AddNonEmpty("caption", f.Caption)
		p.AddNonZero("message_thread_id", thread)
		err := g.upload(ctx, method, p, tgbotapi.RequestFile{Name: field, Data: tgbotapi.FileBytes{Name: f.Name, Bytes: f.Data}})
		if err == nil {
			return nil
		}
		if err := g.migrated(to, err); errors.Is(err, errMigrated) {
			return err
		}
		if photo && isRefused(err) {
			g.log.Warn().Int64("chat", chat).Err(err).Msg("Telegram refused the photo; sending it as a document")
			photo = false
			return fmt.Errorf("%w: %w", errPhoto, err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("telegram: file to %s: %w", conv.Key(), err)
	}
	return nil
}

// upload makes one multipart request of method with p and file. Its
// timeout is the send timeout and a second more for every MiB of the
// file; the error is scrubbed of the token and carries Telegram's
// error_code.
func (g *Gateway) upload(ctx context.Context, method string, p tgbotapi.Params, file tgbotapi.RequestFile) error {
	timeout := g.cfg.SendTimeout
	if b, ok := file.Data.(tgbotapi.FileBytes); ok {
		timeout += time.Duration(len(b.Bytes)>>20) * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := g.api(rctx).UploadFiles(method, p, []tgbotapi.RequestFile{file})
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && apiErr.Code == 0 && resp != nil {
		// The library's UploadFiles, unlike its Request, leaves the
		// error_code out of its Error: without it a 429 would read as
		// a permanent refusal.
		apiErr.Code = resp.ErrorCode
	}
	return g.scrub(err)
}

// isRefused reports a request Telegram refused as malformed or too large
// (400, 413).
func isRefused(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && (apiErr.Code == http.StatusBadRequest || apiErr.Code == http.StatusRequestEntityTooLarge)
}
