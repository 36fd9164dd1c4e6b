package telegram

import "testing"

func TestRenderHTML(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"plain & <tags>", "plain &amp; &lt;tags&gt;"},
		{"**bold** and __bold__", "<b>bold</b> and <b>bold</b>"},
		{"*it* and _it_", "<i>it</i> and <i>it</i>"},
		{"~~gone~~", "<s>gone</s>"},
		{"use `a<b>` here", "use <code>a&lt;b&gt;</code> here"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"* item\n* item", "* item\n* item"},
		{"**unclosed", "**unclosed"},
		{"*a **b** c*", "<i>a <b>b</b> c</i>"},
		{`\*not italic\*`, "*not italic*"},
		{"[docs](https://example.com/?a=1&b=2)", `<a href="https://example.com/?a=1&amp;b=2">docs</a>`},
		{"[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"# Title\ntext", "<b>Title</b>\ntext"},
		{"```go\nif a < b {\n}\n```\nafter", "<pre><code class=\"language-go\">if a &lt; b {\n}</code></pre>\nafter"},
		{"```\nno lang\n```", "<pre><code>no lang</code></pre>"},
		{"```py\nunclosed", "<pre><code class=\"language-py\">unclosed</code></pre>"},
		{"```x\"><script>\ncode\n```", "<pre><code>code</code></pre>"},
		{"`` a ` b ``", "<code> a ` b </code>"},
		{"lonely ` tick", "lonely ` tick"},
		// A fence may be indented by up to three spaces, as gateways.Split
		// sees it; with four it is text, inside a block too.
		{"   ```\ncode\n   ```\nafter", "<pre><code>code</code></pre>\nafter"},
		{"    ```\nnot code", "    ```\nnot code"},
		{"```\na\n    ```\nb\n```", "<pre><code>a\n    ```\nb</code></pre>"},
	} {
		if got := renderHTML(tc.md); got != tc.want {
			t.Errorf("renderHTML(%q)\n got %q\nwant %q", tc.md, got, tc.want)
		}
	}
}

// FuzzRenderHTML checks that any input renders to HTML the Bot API
// accepts: balanced tags, nothing unescaped.
func FuzzRenderHTML(f *testing.F) {
	for _, s := range []string{"**a *b* c**", "[a](https://x)", "```go\nx\n", "_a_b_", "~~**x~~**", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		if err := checkHTML(renderHTML(md)); err != "" {
			t.Fatalf("renderHTML(%q) = %q: %s", md, renderHTML(md), err)
		}
	})
}

// checkHTML is a small balance check of the tags renderHTML writes.
func checkHTML(s string) string {
	var stack []string
	for i := 0; i < len(s); i++ {
		if s[i] == '>' {
			return "bare >"
		}
		if s[i] != '<' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '>' {
			if s[j] == '<' {
				return "bare <"
			}
			j++
		}
		if j == len(s) {
			return "bare <"
		}
		tag := s[i+1 : j]
		if tag != "" && tag[0] == '/' {
			if len(stack) == 0 || stack[len(stack)-1] != tag[1:] {
				return "unbalanced " + tag
			}
			stack = stack[:len(stack)-1]
		} else {
			name := tag
			for k := range tag {
				if tag[k] == ' ' {
					name = tag[:k]
					break
				}
			}
			stack = append(stack, name)
		}
		i = j
	}
	if len(stack) > 0 {
		return "unclosed " + stack[len(stack)-1]
	}
	return ""
}
