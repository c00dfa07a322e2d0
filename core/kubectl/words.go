package kubectl

import (
	"errors"
	"strings"
)

// SplitWords splits a command line into words the way a POSIX shell does,
// without expansions: blanks separate words; 'single quotes' keep everything
// literally; "double quotes" keep everything but let \ escape $ ` " \ and a
// newline; outside quotes \ keeps the next character (and \<newline> is
// dropped). Quotes join with the text around them: a'b'"c" is one word abc,
// and a pair of empty quotes is an empty word. An unterminated quote or a trailing backslash is
// an error. # starts a comment at the beginning of a word.
func SplitWords(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool // cur holds a word, possibly empty ("")
		runes   = []rune(line)
		i       int
		isBlank = func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
	)
	for i < len(runes) {
		r := runes[i]
		switch {
		case isBlank(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case r == '#' && !inWord:
			return words, nil
		case r == '\\':
			if i+1 >= len(runes) {
				return nil, errors.New("unexpected end of input after backslash")
			}
			if runes[i+1] != '\n' {
				cur.WriteRune(runes[i+1])
				inWord = true
			}
			i += 2
		case r == '\'':
			end := -1
			for j := i + 1; j < len(runes); j++ {
				if runes[j] == '\'' {
					end = j
					break
				}
			}
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(string(runes[i+1 : end]))
			inWord = true
			i = end + 1
		case r == '"':
			j := i + 1
			closed := false
			for j < len(runes) {
				c := runes[j]
				if c == '"' {
					closed = true
					break
				}
				if c == '\\' && j+1 < len(runes) {
					switch n := runes[j+1]; n {
					case '$', '`', '"', '\\':
						cur.WriteRune(n)
						j += 2
						continue
					case '\n':
						j += 2
						continue
					}
				}
				cur.WriteRune(c)
				j++
			}
			if !closed {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
			i = j + 1
		default:
			cur.WriteRune(r)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
