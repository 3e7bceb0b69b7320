import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The gathering rule of `GroupCommit`: a group of writers that completes is synced by one of
/// its own writers, never by a deadline. The deadlines here are far longer than any sync, so a
/// sync that waited for one shows in `deadlinesPassedWaiting`.
@Suite("Group commit gathers writers without waiting for a deadline")
struct GroupCommitGatheringTests {
  @Test("a writer a sync covered wakes the gathering writers when it leaves, so no sync waits for a deadline")
  func coveredWriterLeavingCompletesTheGroup() throws {
    let limit: UInt64 = 3_000_000_000
    let group = GroupCommit(gatherLimit: limit, settleTime: limit)
    let counters = Locked((ticket: UInt64(0), synced: UInt64(0), finished: 0, violations: 0))
    let sync: @Sendable () throws -> UInt64 = {
      let covered = counters.withLock { $0.ticket }
      usleep(200)  // about one fdatasync of a small write
      counters.withLock { $0.synced = max($0.synced, covered) }
      return covered
    }
    let threads = 8
    let commits = testIterations(150)
    for _ in 0..<threads {
      Thread.detachNewThread {
        defer { counters.withLock { $0.finished += 1 } }
        for _ in 0..<commits {
          let announcement = group.begin()
          let ticket = counters.withLock {
            $0.ticket += 1
            return $0.ticket
          }
          try? announcement.waitUntilDurable(ticket, sync: sync)
          counters.withLock { if $0.synced < ticket { $0.violations += 1 } }
        }
      }
    }
    let finished = waitUntil(seconds: 300) { counters.withLock { $0.finished } == threads }
    #expect(finished, "a writer never returned")
    #expect(counters.withLock { $0.violations } == 0, "a writer returned before a sync covered its ticket")
    #expect(group.deadlinesPassedWaiting == 0, "a complete group waited for its deadline")
  }

  @Test("a dropped announcement tells the group it will not arrive, so the others sync without it")
  func droppedAnnouncementCompletesTheGroup() throws {
    let limit: UInt64 = 3_000_000_000
    let group = GroupCommit(gatherLimit: limit, settleTime: limit)
    let ticket = Locked(UInt64(0))
    let sync: @Sendable () throws -> UInt64 = { ticket.withLock { $0 } }
    let dropped = group.begin()
    let done = Locked(false)
    Thread.detachNewThread {
      let waiting = group.begin()
      ticket.withLock { $0 = 1 }
      try? waiting.waitUntilDurable(1, sync: sync)
      done.withLock { $0 = true }
    }
    // The waiter gathers for the other commit, which then fails and is dropped.
    #expect(waitUntil(seconds: 60) { group.waitingWriters == 1 }, "the writer never arrived in the wait")
    _ = consume dropped
    #expect(waitUntil(seconds: 60) { done.withLock { $0 } }, "the waiting writer never returned")
    #expect(group.deadlinesPassedWaiting == 0, "the group waited for the dropped commit's deadline")
  }
}

/// Polls `condition` every millisecond until it holds or `seconds` have passed.
private func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !condition() {
    if Date() >= deadline { return false }
    usleep(1_000)
  }
  return true
}
