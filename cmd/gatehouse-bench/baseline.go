package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// extractRef writes the tree of the git ref (a commit, branch or tag of
// the repository at root) into dir, as git archive has it.
func extractRef(ctx context.Context, root, ref, dir string) error {
	tarball := dir + ".tar"
	defer os.Remove(tarball)
	var stderr bytes.Buffer
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", "-o", tarball, ref)
	archive.Stderr = &stderr
	if err := archive.Run(); err != nil {
		return fmt.Errorf("baseline: git archive %s: %w\n%s", ref, err, stderr.Bytes())
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	untar := exec.CommandContext(ctx, "tar", "-x", "-f", tarball, "-C", dir)
	untar.Stderr = &stderr
	if err := untar.Run(); err != nil {
		return fmt.Errorf("baseline: tar: %w\n%s", err, stderr.Bytes())
	}
	return nil
}

// buildBaseline builds ./cmd/bot at the git ref o.baseline, extracted
// under dir, and returns the binary and the extracted tree.
func buildBaseline(ctx context.Context, o options, root, dir string, progress io.Writer) (bin, src string, err error) {
	src = filepath.Join(dir, "baseline-src")
	if err := extractRef(ctx, root, o.baseline, src); err != nil {
		return "", "", err
	}
	fmt.Fprintf(progress, "building ./cmd/bot at %s …\n", o.baseline)
	bin, err = buildIn(ctx, src, filepath.Join(dir, "bot-baseline"))
	if err != nil {
		return "", "", fmt.Errorf("baseline %s: %w", o.baseline, err)
	}
	return bin, src, nil
}

// releaseSize builds the release's bot of the module at root (SQLite only:
// -tags nopostgres,nethttpomithttp2, as .goreleaser.yaml does) into dir and returns its
// size in bytes.
func releaseSize(ctx context.Context, root, dir string) (int64, error) {
	bin, err := buildIn(ctx, root, filepath.Join(dir, "bot-release"), "nopostgres")
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return 0, fmt.Errorf("release size: %w", err)
	}
	return fi.Size(), nil
}
