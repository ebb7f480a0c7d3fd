//go:build !baton_bugs

package csi

// seededBugDemotesTheEnd is false in every real build. Only a build with the
// baton_bugs tag -- the tests that prove the scenarios catch a broken rule --
// sets it (bugs_on.go).
const seededBugDemotesTheEnd = false
