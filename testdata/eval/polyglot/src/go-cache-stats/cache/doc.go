// Package cache keeps hot entries in memory and counts their use.
package cache
