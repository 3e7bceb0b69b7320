import Foundation

/// Shares one `fdatasync` among concurrent writers (group commit).
///
/// Each write gets a ticket. A writer that needs its ticket durable either finds it already
/// covered, waits for the sync in progress, or becomes the leader: it syncs the file and so
/// covers every ticket written before the sync started, its own and other writers'.
final class GroupCommit: @unchecked Sendable {
  // State guarded by `condition`.
  private let condition = NSCondition()
  private var durableTicket: UInt64 = 0
  private var syncing = false

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
      condition.unlock()
      let result = Result { try sync() }
      condition.lock()
      syncing = false
      condition.broadcast()
      switch result {
      case .success(let covered): durableTicket = max(durableTicket, covered)
      case .failure(let error): throw error
      }
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
