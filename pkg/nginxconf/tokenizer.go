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

// What ends a statement, as ngx_conf_read_token returns it.
type terminator int

const (
	endStatement terminator = iota // ";"
	blockStart                     // "{"
	blockEnd                       // "}", alone
	endOfFile
)

// statement is one directive as the tokenizer reads it: its name, how many words it
// has, where it started and what ended it.
type statement struct {
	name     string // the first word, quotes removed
	words    int
	line     int // line of the first word
	lastLine int // line where the last word ended
	end      terminator
	endLine  int // line of the terminator
}

// tokenizer reads nginx configuration syntax as nginx's core does (ngx_conf_read_token
// in src/core/ngx_conf_file.c): words separated by spaces, tabs, CR and LF; "..." and
// '...' quote a word; a backslash escapes the next character; "#" at the start of a word
// comments out the rest of the line; a word ends at ";" or "{", not at "}" (which only
// counts alone); "${" inside a word is part of a variable, not a block. A closing quote
// must be followed by a space, ";", "{" or ")".
type tokenizer struct {
	src  string
	pos  int
	line int
}

func isSpace(ch byte) bool { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' }

// next reads the words of one statement up to what ends it.
func (t *tokenizer) next() (statement, *SyntaxError) {
	var (
		stmt                                                 statement
		lastSpace                                            = true
		needSpace, quoted, sQuoted, dQuoted, comment, dollar bool
		start, startLine                                     int
	)
	word := func(end int) {
		if stmt.words == 0 {
			stmt.name, stmt.line = t.src[start:end], startLine
		}
		stmt.words++
		stmt.lastLine = t.line
		if end < len(t.src) && t.src[end] == '\n' {
			stmt.lastLine-- // the line feed that ended the word was counted already
		}
	}
	finish := func(end terminator) (statement, *SyntaxError) {
		stmt.end, stmt.endLine = end, t.line
		return stmt, nil
	}
	for {
		if t.pos >= len(t.src) {
			switch {
			case sQuoted || dQuoted:
				return stmt, errorf(startLine, "unterminated quoted string (opened with %s)", quote(t.src[start-1]))
			case !lastSpace:
				word(t.pos)
				fallthrough
			case stmt.words > 0:
				return stmt, missingSemicolon(stmt, "the end of the file", t.line)
			}
			return finish(endOfFile)
		}
		ch := t.src[t.pos]
		t.pos++
		if ch == '\n' {
			t.line++
			comment = false
		}
		if comment {
			continue
		}
		if quoted {
			quoted = false
			continue
		}
		if needSpace {
			switch {
			case isSpace(ch):
				lastSpace, needSpace = true, false
				continue
			case ch == ';':
				return finish(endStatement)
			case ch == '{':
				return finish(blockStart)
			case ch == ')':
				lastSpace, needSpace = true, false
			default:
				return stmt, errorf(t.line, "unexpected %s after a quoted string", quote(ch))
			}
		}
		if lastSpace {
			start, startLine = t.pos-1, t.line
			if isSpace(ch) {
				continue
			}
			switch ch {
			case ';', '{':
				if stmt.words == 0 {
					return stmt, errorf(t.line, "unexpected %s with no directive before it", quote(ch))
				}
				if ch == '{' {
					return finish(blockStart)
				}
				return finish(endStatement)
			case '}':
				if stmt.words != 0 {
					return stmt, missingSemicolon(stmt, `"}"`, t.line)
				}
				return finish(blockEnd)
			case '#':
				comment = true
				continue
			case '\\':
				quoted = true
			case '"':
				start++
				dQuoted = true
			case '\'':
				start++
				sQuoted = true
			case '$':
				dollar = true
			}
			lastSpace = false
			continue
		}
		if ch == '{' && dollar {
			continue
		}
		dollar = false
		switch {
		case ch == '\\':
			quoted = true
		case ch == '$':
			dollar = true
		case dQuoted && ch == '"', sQuoted && ch == '\'':
			dQuoted, sQuoted, needSpace = false, false, true
			word(t.pos - 1)
		case dQuoted || sQuoted:
		case isSpace(ch) || ch == ';' || ch == '{':
			lastSpace = true
			word(t.pos - 1)
			if ch == ';' {
				return finish(endStatement)
			}
			if ch == '{' {
				return finish(blockStart)
			}
		}
	}
}
