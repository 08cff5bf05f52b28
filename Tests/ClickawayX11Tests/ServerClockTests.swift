import ClickawayCore
import ClickawayX11
import ProcessSupport
import Testing
import XTestHarness

@Suite struct ServerClockTests {
    /// A popup's opening time is read off this clock and compared with a press's server
    /// timestamp for `grace_ms`: an estimate ahead of the server, even by 1 ms, would let an
    /// outside click pass with grace_ms = 0. Calibrated many times, it must never run ahead
    /// of a press that comes after.
    @Test func calibratedClockNeverRunsAheadOfTheServer() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            let probe = try TestClient(display: display)
            let input = try XTestInput(display: display)
            let window = try probe.createWindow(at: Rect(x: 0, y: 0, width: 100, height: 100))
            for round in 0..<150 {
                let clock = try x.calibrateClock()
                let estimate = clock.now()
                // A press is stamped when the server takes the input in: what grace_ms compares.
                try input.click(1, at: 10 + Int32(round % 50), 10)
                let stamp = try probe.wait("the press on the probe window") { event -> Timestamp? in
                    if case .buttonPress(let b) = event, b.window == window.id { return b.time }
                    return nil
                }
                #expect(estimate <= clock.unwrap(stamp), "round \(round): estimate \(estimate), server \(stamp)")
            }
        }
    }
}
