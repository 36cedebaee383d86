// Package wait is the one polling helper of every test: For checks a
// condition until it holds or a timeout passes, so tests synchronise on
// observable state and never on sleeps.
//
// It is a leaf (standard library only), so the internal tests of storage and
// the coordinator can use it as well as internal/testcluster, which builds its
// WaitForController, WaitForLeader and WaitForISR on it.
package wait
