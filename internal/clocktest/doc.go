// Package clocktest is for tests only: Fake, a kafka.Clock that moves only when a test advances
// it, firing the timers that fall due in time order, each at its own time. The group coordinator's
// and the controller's tests drive their timers with it.
package clocktest
