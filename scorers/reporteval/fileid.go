package reporteval

import (
	"crypto/md5"
	"encoding/hex"
)

// FileID is the original's id of a report, the hex MD5 of its topic's
// UTF-8 bytes.
func FileID(topic string) string {
	sum := md5.Sum([]byte(topic))
	return hex.EncodeToString(sum[:])
}
