import Foundation

/// Shares one `fdatasync` among concurrent writers (group commit).
///
/// Each write gets a ticket. A writer that needs its ticket durable either finds it already
/// covered, waits for the sync in progress, or becomes the leader: it syncs the file and so
/// covers every ticket written before the sync started, its own and other writers'.
///
/// Writers under `.always` also say when they start a commit (`begin`), and arrive in
/// `waitUntilDurable` once it is appended (or call `end` if they will not wait). A sync
/// starts when the group is complete: no announced commit is on its way, and every writer
/// in `waitUntilDurable` waits for a ticket the sync would cover (writers the last sync
/// covered but that have not woken up yet will be back with their next commit). The writer
/// whose arrival completes the group syncs at once, without waking anyone; the others sleep
/// until that sync ends. On a machine with fewer cores than writers the others are still
/// waking up or encrypting when the first one arrives, and a sync started then would leave
/// them for the next one (and, in a run measured here, kept doing so: one commit per sync).
/// A group that does not complete (a writer stopped writing) is synced anyway after
/// `gatherLimit`, or after `settleTime` when no commit is on its way.
final class GroupCommit: @unchecked Sendable {
  /// The longest the first waiting writer waits for commits on their way before a sync
  /// starts (about one `fdatasync` of a small write on an SSD).
  static let gatherLimit: Double = 0.000_5
  /// The longest it waits when no commit is on its way but writers covered by the last sync
  /// have not left yet.
  static let settleTime: Double = 0.000_1

  // State guarded by `condition`.
  private let condition = NSCondition()
  private var durableTicket: UInt64 = 0
  private var syncing = false
  /// Commits between `begin` and their arrival in `waitUntilDurable` (or `end`).
  private var inFlight = 0
  /// The tickets of the writers in `waitUntilDurable`, durable or not yet (a handful: one
  /// per waiting thread).
  private var waiting: [UInt64] = []
  /// When the first writer of the group being gathered arrived.
  private var gatherStart: Date?

  /// A commit that will wait for durability has started (before it encrypts).
  func begin() {
    condition.lock()
    inFlight += 1
    condition.unlock()
  }

  /// A commit announced with `begin` will not wait for durability (it failed, or wrote nothing).
  func end() {
    condition.lock()
    inFlight -= 1
    // Writers gathering for the group may have been waiting for this one.
    if inFlight == 0 && !waiting.isEmpty { condition.broadcast() }
    condition.unlock()
  }

  /// Returns once `ticket` is durable.
  ///
  /// - Parameters:
  ///   - announced: the caller's commit was announced with `begin` (and has been appended).
  ///   - sync: syncs the store and returns the highest ticket it covered.
  func waitUntilDurable(_ ticket: UInt64, announced: Bool = false, sync: () throws -> UInt64) throws {
    condition.lock()
    defer { condition.unlock() }
    if announced { inFlight -= 1 }
    guard durableTicket < ticket else {
      if announced && inFlight == 0 && !waiting.isEmpty { condition.broadcast() }
      return
    }
    waiting.append(ticket)
    defer {
      if let index = waiting.firstIndex(of: ticket) { waiting.remove(at: index) }
    }
    while durableTicket < ticket {
      if syncing {
        condition.wait()
        continue
      }
      if let deadline = gatherDeadline() {
        // The group is not complete: sleep until it is (its last writer syncs) or until the
        // deadline, whichever comes first.
        _ = condition.wait(until: deadline)
        continue
      }
      syncing = true
      gatherStart = nil
      condition.unlock()
      let result = Result { try sync() }
      condition.lock()
      syncing = false
      condition.broadcast()
      switch result {
      case .success(let covered):
        durableTicket = max(durableTicket, covered)
      case .failure(let error): throw error
      }
    }
  }

  /// Called with the lock held by a waiting writer when no sync runs: `nil` when a sync
  /// should start now, else when to look again.
  private func gatherDeadline() -> Date? {
    if inFlight == 0 && waiting.allSatisfy({ $0 > durableTicket }) { return nil }
    let now = Date()
    let start = gatherStart ?? now
    gatherStart = start
    let deadline = start.addingTimeInterval(inFlight > 0 ? Self.gatherLimit : Self.settleTime)
    return now >= deadline ? nil : deadline
  }

  /// Records that everything up to `ticket` is durable (a segment was sealed with a sync).
  func markDurable(_ ticket: UInt64) {
    condition.lock()
    durableTicket = max(durableTicket, ticket)
    gatherStart = nil
    condition.broadcast()
    condition.unlock()
  }
}
