import Foundation

/// Shares one `fdatasync` among concurrent writers (group commit).
///
/// Each write gets a ticket. A writer that needs its ticket durable either finds it already
/// covered, waits for the sync in progress, or becomes the leader: it syncs the file and so
/// covers every ticket written before the sync started, its own and other writers'.
///
/// Writers under `.always` also say when they start a commit (`begin`) and when it is appended
/// or has failed (`end`). A leader first waits, for at most `gatherLimit`, until no such commit
/// is on its way: on a machine with fewer cores than writers the others are still encrypting
/// when the first one is ready, and a leader that synced at once would leave them for the
/// next sync.
final class GroupCommit: @unchecked Sendable {
  /// The longest a leader waits for commits on their way before it syncs (about one
  /// `fdatasync` of a small write on an SSD).
  static let gatherLimit: Double = 0.000_5
  /// How long a leader waits in any case when the last sync covered several commits.
  static let settleTime: Double = 0.000_1

  // State guarded by `condition`.
  private let condition = NSCondition()
  private var durableTicket: UInt64 = 0
  private var syncing = false
  /// Commits between `begin` and `end`.
  private var inFlight = 0
  /// How many commits the last sync covered.
  private var lastGroup: UInt64 = 0

  /// A commit that will wait for durability has started (before it encrypts).
  func begin() {
    condition.lock()
    inFlight += 1
    condition.unlock()
  }

  /// A commit announced with `begin` has been appended, or has failed.
  func end() {
    condition.lock()
    inFlight -= 1
    if inFlight == 0 { condition.broadcast() }
    condition.unlock()
  }

  /// Returns once `ticket` is durable.
  ///
  /// - Parameter sync: syncs the store and returns the highest ticket it covered.
  func waitUntilDurable(_ ticket: UInt64, sync: () throws -> UInt64) throws {
    condition.lock()
    defer { condition.unlock() }
    while durableTicket < ticket {
      if syncing {
        condition.wait()
        continue
      }
      syncing = true
      if inFlight > 0 || lastGroup > 1 { gather() }
      condition.unlock()
      let result = Result { try sync() }
      condition.lock()
      syncing = false
      condition.broadcast()
      switch result {
      case .success(let covered):
        lastGroup = covered > durableTicket ? covered - durableTicket : 0
        durableTicket = max(durableTicket, covered)
      case .failure(let error): throw error
      }
    }
  }

  /// Called by a leader, holding the lock, before it syncs: waits until no announced commit
  /// is on its way, for at most `gatherLimit`. When the last sync covered several commits,
  /// waits at least `settleTime`: the writers that sync released are then starting their
  /// next commits and may not have announced them yet. (Without it, 8 writers settle into
  /// two groups of 4 that take turns, each appending while the other's sync runs.)
  private func gather() {
    let start = Date()
    let deadline = start.addingTimeInterval(Self.gatherLimit)
    let settle = start.addingTimeInterval(lastGroup > 1 ? Self.settleTime : 0)
    while true {
      let now = Date()
      if now >= deadline || (inFlight == 0 && now >= settle) { return }
      _ = condition.wait(until: inFlight > 0 ? deadline : settle)
    }
  }

  /// Records that everything up to `ticket` is durable (a segment was sealed with a sync).
  func markDurable(_ ticket: UInt64) {
    condition.lock()
    durableTicket = max(durableTicket, ticket)
    condition.broadcast()
    condition.unlock()
  }
}
