import ClickawaySystem
import Testing

@Suite struct DeadlineTests {
    @Test func durationsRoundUpToTheNextMillisecond() {
        #expect(Deadline.milliseconds(roundingUp: .zero) == 0)
        #expect(Deadline.milliseconds(roundingUp: .nanoseconds(1)) == 1)
        #expect(Deadline.milliseconds(roundingUp: .milliseconds(5)) == 5)
        #expect(Deadline.milliseconds(roundingUp: .microseconds(5001)) == 6)
        #expect(Deadline.milliseconds(roundingUp: .seconds(2)) == 2000)
        #expect(Deadline.milliseconds(roundingUp: .seconds(-3)) == 0)
        #expect(Deadline.milliseconds(roundingUp: .seconds(Int64.max)) == .max)
    }

    @Test func pollTimeoutIsTheTimeLeftClampedAndForeverWithoutADeadline() {
        let deadline = Deadline(milliseconds: 10_000)
        #expect(deadline.pollTimeout(now: 9_000) == 1000)
        #expect(deadline.pollTimeout(now: 10_000) == 0)
        #expect(deadline.pollTimeout(now: 12_000) == 0)
        #expect(Deadline(milliseconds: .max).pollTimeout(now: 0) == .max)
        #expect(Deadline.pollTimeout(nil) == -1)
        #expect(Deadline.pollTimeout(deadline, now: 9_999) == 1)
    }

    @Test func passedAndRemaining() {
        let deadline = Deadline(milliseconds: 100)
        #expect(!deadline.hasPassed(now: 99))
        #expect(deadline.hasPassed(now: 100))
        #expect(deadline.remaining(now: 40) == 60)
        #expect(deadline.remaining(now: 400) == 0)
        #expect(Deadline(milliseconds: 1) < Deadline(milliseconds: 2))
    }

    @Test func theClockMovesForwardInEveryUnit() {
        let (ms, us, ns) = (MonotonicClock.milliseconds(), MonotonicClock.microseconds(), MonotonicClock.nanoseconds())
        #expect(ns / 1_000_000 >= ms)
        #expect(ns / 1000 >= us)
        let later = Deadline(after: .milliseconds(50))
        #expect(later.milliseconds >= ms + 50)
        #expect(!later.hasPassed())
    }
}
