// Package infra is the real bed's infrastructure, apart from the bed that
// scenarios drive (package real): what the bed makes on the host and what
// teardown takes away again. So far, the loop devices the sites' node
// agents attach, found and released however their paths now show.
package infra
