package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The sizes the layout keeps (issue 29): a function a reader takes in at
// once, a file of one subject, and internal/ as the leaves, not a hiding
// place for the product.
const (
	maxFuncLines = 80
	maxFileLines = 500
	// maxInternalShare is the part of the module's non-test lines that
	// internal/ may hold, the fakes not counted (they are test support).
	maxInternalShare = 0.10
)

// sizes is what TestSizes measures of the module's non-test Go files.
type sizes struct {
	files, lines, internal int
	longFuncs, longFiles   []string
	longestFunc            string
	longestFuncLines       int
	longestFile            string
	longestFileLines       int
}

// measure reads every non-test Go file under root (hidden, testdata and
// vendor folders aside).
func measure(root string) (sizes, error) {
	var s sizes
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		s.add(rel, fset, f, bytes.Count(src, []byte("\n")))
		return nil
	})
	return s, err
}

// add counts one file: its lines, and the length of each function and
// function literal in it.
func (s *sizes) add(rel string, fset *token.FileSet, f *ast.File, lines int) {
	s.files++
	fake := strings.HasPrefix(rel, "internal/fake/")
	if !fake {
		s.lines += lines
		if strings.HasPrefix(rel, "internal/") {
			s.internal += lines
		}
	}
	if lines > maxFileLines {
		s.longFiles = append(s.longFiles, fmt.Sprintf("%s: %d lines", rel, lines))
	}
	if lines > s.longestFileLines {
		s.longestFile, s.longestFileLines = rel, lines
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var name string
		switch fn := n.(type) {
		case *ast.FuncDecl:
			if fn.Body == nil {
				return true
			}
			name = fn.Name.Name
		case *ast.FuncLit:
			name = "a function literal"
		default:
			return true
		}
		start := fset.Position(n.Pos()).Line
		length := fset.Position(n.End()).Line - start + 1
		where := fmt.Sprintf("%s:%d %s", rel, start, name)
		if length > maxFuncLines {
			s.longFuncs = append(s.longFuncs, fmt.Sprintf("%s: %d lines", where, length))
		}
		if length > s.longestFuncLines {
			s.longestFunc, s.longestFuncLines = where, length
		}
		return true
	})
}

// TestSizes: no function longer than maxFuncLines, no file longer than
// maxFileLines, and internal/ under maxInternalShare of the module (test
// files aside). It prints the figures (go test -v), which .ci/run shows.
func TestSizes(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	s, err := measure(root)
	if err != nil {
		t.Fatalf("measuring the module: %v", err)
	}
	if s.files < 100 {
		t.Fatalf("only %d Go files read: the walk is wrong", s.files)
	}
	share := float64(s.internal) / float64(s.lines)
	t.Logf("%d non-test Go files, %d lines (fakes aside); internal/ %d lines, %.1f%% (at most %.0f%%)",
		s.files, s.lines, s.internal, 100*share, 100*maxInternalShare)
	t.Logf("longest function: %s, %d lines (at most %d)", s.longestFunc, s.longestFuncLines, maxFuncLines)
	t.Logf("longest file: %s, %d lines (at most %d)", s.longestFile, s.longestFileLines, maxFileLines)
	slices.Sort(s.longFuncs)
	for _, f := range s.longFuncs {
		t.Errorf("function over %d lines: %s", maxFuncLines, f)
	}
	for _, f := range s.longFiles {
		t.Errorf("file over %d lines: %s", maxFileLines, f)
	}
	if share > maxInternalShare {
		t.Errorf("internal/ holds %.1f%% of the module's lines, over %.0f%%: a feature hides there", 100*share, 100*maxInternalShare)
	}
}

// TestSizesCatchALongFunction: the measure sees a function one line over
// the limit, and a file over its own.
func TestSizesCatchALongFunction(t *testing.T) {
	body := strings.Repeat("\tx++\n", maxFuncLines-2)
	src := "package p\n\nfunc f() {\n\tx := 0\n" + body + "}\n"
	src += strings.Repeat("\n", maxFileLines)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var s sizes
	s.add("p/p.go", fset, f, strings.Count(src, "\n"))
	if len(s.longFuncs) != 1 || !strings.Contains(s.longFuncs[0], "p/p.go:3 f: 81 lines") {
		t.Errorf("long functions = %v, want f at 81 lines", s.longFuncs)
	}
	if len(s.longFiles) != 1 {
		t.Errorf("long files = %v, want p/p.go", s.longFiles)
	}
}
