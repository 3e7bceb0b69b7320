import Foundation

/// A thread outside Swift's concurrency pool that gives the pool a trivial task every second,
/// for as long as the test process runs.
///
/// Prevents: a test run that stops for good on a heavily loaded machine. Such a run had tests
/// started, none running and no worker thread of the pool left (Docs/RELIABILITY.md, "A test
/// run that stops"); one run stood still for over seven minutes and went on by itself when an
/// outside event (its test servers shutting down) resumed work on the pool. Work arriving from
/// outside the pool asks the pool for a thread again; this makes sure some always arrives.
public enum ConcurrencyPoolHeartbeat {
  private static let started: Bool = {
    let thread = Thread {
      while true {
        Thread.sleep(forTimeInterval: 1)
        Task.detached {}
      }
    }
    thread.name = "concurrency-pool-heartbeat"
    thread.start()
    return true
  }()

  /// Starts the heartbeat once per process; later calls do nothing.
  public static func start() {
    _ = started
  }
}
