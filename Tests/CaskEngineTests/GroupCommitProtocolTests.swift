import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `GroupCommit` alone, with a sync that only records what it covered: threads announce
/// commits, abandon some (`end`), wait for others, and call `sync()`-style waits, in a seeded
/// random mix; one thread stops early. Every wait must return, and never before a sync covered
/// its ticket. Prevents a gathering rule that wakes a waiter before a sync covered its commit.
@Suite("GroupCommit's protocol")
struct GroupCommitProtocolTests {
  @Test("random begin / end / wait / sync(): every waiter returns, none before its ticket is covered")
  func randomMix() throws {
    var random = SeededRandom.make(test: "group-commit protocol")
    let group = GroupCommit()
    // ticket: the last one handed out; synced: the highest a finished sync covered.
    let counters = Locked((ticket: UInt64(0), synced: UInt64(0), syncs: 0, violations: 0, finished: 0))
    let sync: @Sendable () throws -> UInt64 = {
      let covered = counters.withLock { $0.ticket }
      usleep(UInt32.random(in: 0...150))
      counters.withLock {
        $0.synced = max($0.synced, covered)
        $0.syncs += 1
      }
      return covered
    }
    let threads = 6
    let operations = testIterations(400)
    for index in 0..<threads {
      let seed = random.next()
      Thread.detachNewThread {
        var mine = SeededRandom(seed: seed)
        defer { counters.withLock { $0.finished += 1 } }
        for _ in 0..<(index == 0 ? 20 : operations) {
          let roll = Int.random(in: 0..<100, using: &mine)
          if roll < 5 {
            // sync(): waits for everything written so far, unannounced.
            let ticket = counters.withLock { $0.ticket }
            try? group.waitUntilDurable(ticket, sync: sync)
            counters.withLock { if $0.synced < ticket { $0.violations += 1 } }
            continue
          }
          let announcement = group.begin()
          if Bool.random(using: &mine) { usleep(UInt32.random(in: 0...100, using: &mine)) }
          if roll < 15 {
            // A commit that failed or wrote nothing: its announcement is dropped.
            _ = consume announcement
            continue
          }
          let ticket = counters.withLock {
            $0.ticket += 1
            return $0.ticket
          }
          try? announcement.waitUntilDurable(ticket, sync: sync)
          counters.withLock { if $0.synced < ticket { $0.violations += 1 } }
        }
      }
    }
    waitUntil(interval: 0.01) { counters.withLock { $0.finished } >= threads }
    let final = counters.withLock { $0 }
    #expect(final.finished == threads, "a waiter never returned")
    #expect(final.violations == 0, "a waiter returned before a sync covered its ticket")
    #expect(final.syncs > 0 && UInt64(final.syncs) <= final.ticket + UInt64(threads * operations))
    print("[group-commit protocol] \(final.ticket) commits, \(final.syncs) syncs")
  }
}
