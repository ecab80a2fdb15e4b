/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package nginxconf

// skipLua reads the body of a *_by_lua_block directive, whose "{" the tokenizer has just
// read, up to its closing "}", as the lua module does: the body is Lua, so braces count
// only outside Lua strings ('...', "..." with backslash escapes, [[...]] and [==[...]==])
// and comments (-- to the end of the line, --[[...]]). nginx without the lua module
// refuses such a directive anyway; with it, only a body that never closes is an error
// of syntax, which is all this reports.
func (t *tokenizer) skipLua(stmt statement) *SyntaxError {
	depth := 1
	for t.pos < len(t.src) {
		ch := t.src[t.pos]
		t.pos++
		switch {
		case ch == '\n':
			t.line++
		case ch == '{':
			depth++
		case ch == '}':
			if depth--; depth == 0 {
				return nil
			}
		case ch == '"' || ch == '\'':
			t.skipLuaString(ch)
		case ch == '[':
			if level, ok := t.longBracket(); ok {
				t.skipLongBracket(level)
			}
		case ch == '-' && t.pos < len(t.src) && t.src[t.pos] == '-':
			t.pos++
			if t.pos < len(t.src) && t.src[t.pos] == '[' {
				t.pos++
				if level, ok := t.longBracket(); ok {
					t.skipLongBracket(level)
					continue
				}
			}
			for t.pos < len(t.src) && t.src[t.pos] != '\n' {
				t.pos++
			}
		}
	}
	return errorf(stmt.endLine, "the Lua body of %s is never closed (unbalanced braces)", name(stmt.name))
}

// skipLuaString moves past a short Lua string whose opening quote was just read.
func (t *tokenizer) skipLuaString(q byte) {
	for t.pos < len(t.src) {
		ch := t.src[t.pos]
		t.pos++
		switch ch {
		case '\n':
			t.line++
		case '\\':
			if t.pos < len(t.src) {
				if t.src[t.pos] == '\n' {
					t.line++
				}
				t.pos++
			}
		case q:
			return
		}
	}
}

// longBracket reads the "="s and "[" of a long bracket whose first "[" was just read,
// and returns its level; when what follows is not a long bracket, nothing is read.
func (t *tokenizer) longBracket() (level int, ok bool) {
	i := t.pos
	for i < len(t.src) && t.src[i] == '=' {
		i++
	}
	if i < len(t.src) && t.src[i] == '[' {
		level, t.pos = i-t.pos, i+1
		return level, true
	}
	return 0, false
}

// skipLongBracket moves past the closing "]", level "="s and "]" of a long string or
// comment.
func (t *tokenizer) skipLongBracket(level int) {
	for t.pos < len(t.src) {
		ch := t.src[t.pos]
		t.pos++
		if ch == '\n' {
			t.line++
			continue
		}
		if ch != ']' {
			continue
		}
		i := t.pos
		for i < len(t.src) && t.src[i] == '=' {
			i++
		}
		if i-t.pos == level && i < len(t.src) && t.src[i] == ']' {
			t.pos = i + 1
			return
		}
	}
}
