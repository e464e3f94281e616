// Package words holds the small helpers that put numbers into English.
package words

import (
	"fmt"
	"strings"
)

// Plural says "1 tensor" or "3 tensors".
func Plural(n int, word string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, word))
}

// Noun says "tensor" for one and "tensors" for any other count.
func Noun(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// List joins items as English does: "a", "a and b", "a, b and c".
func List(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
