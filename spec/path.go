package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxPathKey is the longest key a path spells out in full; longer keys are
// abbreviated to their first pathKeyPrefix bytes and a digest.
const (
	maxPathKey    = 64
	pathKeyPrefix = 32
	digestLen     = 24 // hex digits of the digest: 96 bits of SHA-256
)

// PathKey returns the JSON path of member key of the object at parent, in
// the form diagnostics and Graph.Pos use: parent.key when key is made of
// ASCII letters, digits, '_', '-' and '$', and parent["key"] (a Go-quoted
// string) otherwise. The root's path is "".
//
// A key longer than 64 bytes is abbreviated, so that paths stay short
// however long the names in a document: its first 32 bytes and an ellipsis,
// then '#' and a digest of the whole key, as in
// channels["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"#5d41402abc4b2a76b9719d91].
// Graph.Pos resolves such paths like any other.
func PathKey(parent, key string) string {
	return string(appendPathKey([]byte(parent), key))
}

// PathIndex returns the JSON path of element i of the array at parent:
// parent[i].
func PathIndex(parent string, i int) string {
	return string(appendPathIndex([]byte(parent), i))
}

func appendPathKey(path []byte, key string) []byte {
	if len(key) > maxPathKey {
		return append(path, longKey(key)...)
	}
	if !isBareKey(key) {
		path = append(path, '[')
		path = strconv.AppendQuote(path, key)
		return append(path, ']')
	}
	if len(path) > 0 {
		path = append(path, '.')
	}
	return append(path, key...)
}

func appendPathIndex(path []byte, i int) []byte {
	path = append(path, '[')
	path = strconv.AppendInt(path, int64(i), 10)
	return append(path, ']')
}

// longKey returns the path segment of a key longer than maxPathKey:
// ["prefix…"#digest].
func longKey(key string) string {
	cut := pathKeyPrefix
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	b := []byte{'['}
	b = strconv.AppendQuote(b, key[:cut]+"…")
	b = append(b, '#')
	b = append(b, keyDigest(key)...)
	return string(append(b, ']'))
}

func keyDigest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:digestLen/2])
}

// matches reports whether an object member called key is the step s.
func (s seg) matches(key string) bool {
	if s.digest == "" {
		return key == s.key
	}
	return len(key) > maxPathKey && keyDigest(key) == s.digest
}

func isBareKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}

// parsePath splits a path written by PathKey and PathIndex into its steps;
// ends[i] is the length of the path prefix that ends with step i.
func parsePath(path string) (segs []seg, ends []int, ok bool) {
	i := 0
	for i < len(path) {
		switch {
		case path[i] == '[':
			j := i + 1
			if j < len(path) && path[j] == '"' {
				k := j + 1
				for k < len(path) && path[k] != '"' {
					if path[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(path) {
					return nil, nil, false
				}
				key, err := strconv.Unquote(path[j : k+1])
				if err != nil {
					return nil, nil, false
				}
				sg := seg{key: key, isKey: true}
				k++
				if k < len(path) && path[k] == '#' {
					// An abbreviated long key: "prefix…"#digest.
					if k+1+digestLen >= len(path) {
						return nil, nil, false
					}
					sg.digest = path[k+1 : k+1+digestLen]
					if strings.Trim(sg.digest, "0123456789abcdef") != "" {
						return nil, nil, false
					}
					k += 1 + digestLen
				}
				if k >= len(path) || path[k] != ']' {
					return nil, nil, false
				}
				segs = append(segs, sg)
				i = k + 1
			} else {
				k := strings.IndexByte(path[j:], ']')
				if k <= 0 {
					return nil, nil, false
				}
				n, err := strconv.Atoi(path[j : j+k])
				if err != nil || n < 0 || path[j] == '+' {
					return nil, nil, false
				}
				segs = append(segs, seg{index: n})
				i = j + k + 1
			}
		case path[i] == '.' && i > 0 || i == 0:
			if i > 0 {
				i++
			}
			k := i
			for k < len(path) && path[k] != '.' && path[k] != '[' {
				k++
			}
			if !isBareKey(path[i:k]) {
				return nil, nil, false
			}
			segs = append(segs, seg{key: path[i:k], isKey: true})
			i = k
		default:
			return nil, nil, false
		}
		ends = append(ends, i)
	}
	return segs, ends, true
}
