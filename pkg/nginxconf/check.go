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

// Package nginxconf checks the syntax of an nginx configuration file: the shape of its
// statements and blocks, as nginx's own tokenizer reads them, and nothing else. Directive
// names, their arguments and where they may appear are nginx's to judge (a module may
// add any directive), so "lisen 80;" passes and "listen 80" followed by "}" does not.
package nginxconf

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is the first syntax error of a configuration, on a line counted from 1.
type SyntaxError struct {
	Line    int
	Message string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

func errorf(line int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Line: line, Message: fmt.Sprintf(format, args...)}
}

// maxNameBytes bounds a directive name quoted in a message, quotes and escapes included.
const maxNameBytes = 48

// name quotes a directive name for a message, shortened if long.
func name(s string) string {
	quoted := strconv.Quote(s)
	for cut := min(len(s), maxNameBytes); len(quoted) > maxNameBytes; cut-- {
		quoted = strconv.Quote(s[:cut] + "...")
	}
	return quoted
}

// quote quotes one character for a message.
func quote(ch byte) string { return strconv.Quote(string([]byte{ch})) }

func missingSemicolon(stmt statement, found string, foundLine int) *SyntaxError {
	return errorf(stmt.lastLine, `missing ";" after the directive %s (found %s on line %d)`, name(stmt.name), found, foundLine)
}

// luaBlockSuffix ends the names of the lua module's block directives
// (content_by_lua_block, set_by_lua_block $var, ...), whose body is Lua, not nginx syntax.
const luaBlockSuffix = "_by_lua_block"

// Check returns the first syntax error of conf as a *SyntaxError, or nil: an unbalanced
// "{" or "}", an unterminated quoted string, a directive not ended by ";", a ";" or "{"
// with no directive before it, or a quoted string followed by anything but a space, ";",
// "{" or ")". It accepts what nginx's core tokenizer accepts, and the Lua body of
// *_by_lua_block directives, which the lua module reads as Lua (see skipLua).
func Check(conf string) error {
	if err := check(conf); err != nil {
		return err
	}
	return nil
}

func check(conf string) *SyntaxError {
	t := &tokenizer{src: conf, line: 1}
	var open []statement
	for {
		stmt, err := t.next()
		if err != nil {
			return err
		}
		switch stmt.end {
		case blockStart:
			if strings.HasSuffix(stmt.name, luaBlockSuffix) {
				if err := t.skipLua(stmt); err != nil {
					return err
				}
				continue
			}
			open = append(open, stmt)
		case blockEnd:
			if len(open) == 0 {
				return errorf(stmt.endLine, `unexpected "}": no block is open (unbalanced braces)`)
			}
			open = open[:len(open)-1]
		case endOfFile:
			if len(open) > 0 {
				b := open[len(open)-1]
				return errorf(b.endLine, `the "{" of %s is never closed (unbalanced braces: %d "}" missing at the end)`, name(b.name), len(open))
			}
			return nil
		}
	}
}
