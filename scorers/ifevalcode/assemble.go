package ifevalcode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/sandbox/lang"
)

// ErrCheckEscape is returned when a check_correctness cannot be decoded with
// Python's unicode_escape codec (the original would crash on that item).
var ErrCheckEscape = errors.New("ifevalcode: check_correctness is not valid unicode_escape text")

// Assemble builds the correctness program for language l from the model's
// code (already extracted, see ExtractCode) and the item's
// check_correctness, exactly as the original's *_post_process_func do:
//
//	python:     code + "\n" + check + "\ncheck_correctness()"
//	javascript,
//	typescript: same, without decoding the check
//	cpp:        code without top-level main() + "\n\n#include <iostream>\nusing namespace std;\n" + check + "\n" + main()
//	java:       Solution→Problem with main(), or public classes demoted and a public class Problem appended
//	csharp:     code + "\n" + check with a Main injected into "public class CheckCorrectness\n{\n"
//	php:        "<?php\n" + code without "<?php"/"?>" + "\n" + check + "\ncheck_correctness();\n\n\n?>"
//	shell:      "#!/bin/bash\n" + code + "\n" + check + "\ncheck_correctness\n\n\n"
//
// For python, cpp, java and csharp the check first goes through
// .encode('utf-8').decode('unicode_escape') (PyUnicodeEscape), as in the
// original.
func Assemble(l lang.Language, code, check string) (string, error) {
	switch l {
	case lang.Python:
		c, err := PyUnicodeEscape(check)
		if err != nil {
			return "", err
		}
		return code + "\n" + c + "\n" + "check_correctness()", nil
	case lang.JavaScript, lang.TypeScript:
		return code + "\n" + check + "\n" + "check_correctness()", nil
	case lang.CPP:
		c, err := PyUnicodeEscape(check)
		if err != nil {
			return "", err
		}
		return RemoveCppMain(code) + "\n" + "\n#include <iostream>\nusing namespace std;\n" + c + "\n" + cppMain, nil
	case lang.Java:
		return assembleJava(code, check)
	case lang.CSharp:
		c, err := PyUnicodeEscape(strings.Replace(check, csharpAnchor, csharpAnchorWithMain, -1))
		if err != nil {
			return "", err
		}
		return code + "\n" + c + "\n", nil
	case lang.PHP:
		code = strings.ReplaceAll(code, "<?php", "")
		code = strings.ReplaceAll(code, "?>", "")
		return "<?php\n" + code + "\n" + check + "\n" + "check_correctness();\n\n\n?>", nil
	case lang.Shell:
		return "#!/bin/bash\n" + code + "\n" + check + "\n" + "check_correctness\n\n\n", nil
	}
	return "", fmt.Errorf("ifevalcode: %w: %q", lang.ErrUnknownLanguage, l)
}

const cppMain = `
int main() {
    check_correctness();
    return 0;
}
`

const javaMain = `public class Problem {
    public static void main(String[] args) {
        TestCases.checkCorrectness();
    }
`

func assembleJava(code, check string) (string, error) {
	if strings.Contains(check, "Solution.") {
		// Static-method items: the model's Solution becomes the public
		// class Problem (the file is Problem.java) with a main.
		code = strings.ReplaceAll(code, "public class Solution {", javaMain)
		c, err := PyUnicodeEscape(strings.ReplaceAll(check, "Solution.", "Problem."))
		if err != nil {
			return "", err
		}
		return code + "\n\n\n" + c, nil
	}
	// Class-design items: every public class is demoted and a public
	// class Problem whose main runs the tests is appended.
	code = strings.ReplaceAll(code, "public class", "class")
	c, err := PyUnicodeEscape(check)
	if err != nil {
		return "", err
	}
	return code + "\n\n\n" + c + "\n" + javaMain + "}\n", nil
}

// csharpAnchor is the literal text the original replaces to inject Main; a
// check without it (e.g. with \r\n line ends) gets no Main and so never
// compiles into a program, as in the original.
const csharpAnchor = "public class CheckCorrectness\n{\n"

const csharpAnchorWithMain = `public class CheckCorrectness
{
    public static bool return_value;
    public static void Main(string[] args) {
        return_value = check_correctness();
        if (!return_value) {
            throw new Exception("check_correctness()");
        }
    }

`

// PyUnicodeEscape returns s.encode('utf-8').decode('unicode_escape') as
// Python computes it: backslash escapes are decoded and every other byte of
// the UTF-8 encoding becomes the code point of the same value (so non-ASCII
// text turns into Latin-1 mojibake, as in the original). Errors where Python
// raises: a truncated \x, \u or \U escape, a code point above U+10FFFF, a
// surrogate (which Python cannot write back as UTF-8), a trailing backslash
// and \N{...} named escapes (not supported here).
func PyUnicodeEscape(s string) (string, error) {
	if !strings.Contains(s, `\`) && isASCII(s) {
		return s, nil
	}
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, rune(c))
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("%w: \\ at end of string", ErrCheckEscape)
		}
		i++
		switch e := s[i]; e {
		case '\n':
			// line continuation: nothing
		case '\\', '\'', '"':
			out = append(out, rune(e))
		case 'a':
			out = append(out, 7)
		case 'b':
			out = append(out, 8)
		case 'f':
			out = append(out, 12)
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, 11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := rune(e - '0')
			for k := 0; k < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; k++ {
				i++
				v = v*8 + rune(s[i]-'0')
			}
			out = append(out, v)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+n > len(s) || !isHex(s[i+1:i+1+n]) {
				return "", fmt.Errorf("%w: truncated \\%cXX escape at byte %d", ErrCheckEscape, e, i-1)
			}
			v, _ := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if v > utf8.MaxRune {
				return "", fmt.Errorf("%w: illegal Unicode character at byte %d", ErrCheckEscape, i-1)
			}
			if v >= 0xD800 && v <= 0xDFFF {
				return "", fmt.Errorf("%w: surrogate \\%c%s cannot be written as UTF-8", ErrCheckEscape, e, s[i+1:i+1+n])
			}
			out = append(out, rune(v))
			i += n
		case 'N':
			return "", fmt.Errorf("%w: \\N{...} named escapes are not supported", ErrCheckEscape)
		default:
			out = append(out, '\\', rune(e))
		}
	}
	return string(out), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
