package leaderboard

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/blob"
)

// The store lists keys by prefix only, and a board's prefix holds every
// stamp's site, so boards and stamps are found through small marker
// objects instead of listing every key:
//
//	leaderboards/.boards/<board>          one per board (content: its latest stamp)
//	leaderboards/<board>/stamps/<stamp>   one per stamp with a scores.json
//
// (A board name cannot start with "." and a stamp is digits, so neither
// collides with a board or a stamp.) Stores written before the markers
// are found by the full listing, once.

// BoardMarkerKey is the key of a board's marker.
func BoardMarkerKey(board string) string { return "leaderboards/.boards/" + board }

// StampMarkerKey is the key of a stamp's marker.
func StampMarkerKey(board, stamp string) string {
	return fmt.Sprintf("leaderboards/%s/stamps/%s", board, stamp)
}

var stampRE = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z$`)

// Stamps lists a board's stamps that have a scores.json, oldest first: its
// stamp markers, or, when it has none (a board written before them), the
// stamps found by listing every key under the board.
func Stamps(ctx context.Context, store blob.Store, board string) ([]string, error) {
	prefix := "leaderboards/" + board + "/stamps/"
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("leaderboard: list %s: %w", prefix, err)
	}
	var stamps []string
	for _, in := range infos {
		if s := strings.TrimPrefix(in.Key, prefix); stampRE.MatchString(s) {
			stamps = append(stamps, s)
		}
	}
	if len(stamps) == 0 {
		prefix = "leaderboards/" + board + "/"
		if infos, err = store.List(ctx, prefix); err != nil {
			return nil, fmt.Errorf("leaderboard: list %s: %w", prefix, err)
		}
		for _, in := range infos {
			stamp, file, ok := strings.Cut(strings.TrimPrefix(in.Key, prefix), "/")
			if ok && file == "scores.json" && stampRE.MatchString(stamp) {
				stamps = append(stamps, stamp)
			}
		}
	}
	sort.Strings(stamps)
	return stamps, nil
}

// Boards lists the boards with a marker; none when no board has one (a
// store written before them: then the caller lists every key).
func Boards(ctx context.Context, store blob.Store) ([]string, error) {
	const prefix = "leaderboards/.boards/"
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("leaderboard: list %s: %w", prefix, err)
	}
	var boards []string
	for _, in := range infos {
		if b := strings.TrimPrefix(in.Key, prefix); b != "" && !strings.Contains(b, "/") {
			boards = append(boards, b)
		}
	}
	sort.Strings(boards)
	return boards, nil
}
