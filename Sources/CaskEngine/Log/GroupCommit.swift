import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Group commit: shares one `fdatasync` among concurrent writers, and is the one path by which
/// the segment being appended to is synced (by a group's leader, a seal, or `close()`).
///
/// Each append gets a ticket. A writer that needs its ticket durable either finds it already
/// covered, waits for the sync in progress, or becomes the leader: it syncs the file and so
/// covers every ticket written before the sync started, its own and other writers'.
///
/// Writers under `.always` announce a commit before they encrypt it (`begin()`, which returns
/// an `Announcement`), and the announcement ends when the commit arrives in the wait, or when
/// it is dropped (the commit failed or wrote nothing). A sync starts when the group is
/// complete: no announced commit is on its way, and every writer in the wait waits for a ticket
/// the sync would cover. The writer whose arrival completes the group syncs at once, without
/// waking anyone; the others sleep until that sync ends. On a machine with fewer cores than
/// writers the others are still waking up or encrypting when the first one arrives, and a sync
/// started then would leave them for the next one (in a run measured on two cores it kept
/// doing so: one commit per sync). A writer that a sync covered and that leaves the wait wakes
/// the others, since its leaving may complete their group. A group that does not complete (a
/// writer stopped writing) is synced anyway after `gatherLimit`, or after `settleTime` when no
/// commit is on its way. Deadlines are on the monotonic clock (`MonotonicCondition`).
///
/// Syncs are made one at a time, and the first failure sticks: every later sync fails with it.
/// Prevents: after a failed `fdatasync` the kernel may have dropped the dirty pages and reports
/// the error to one caller only; a leader's failed sync and a seal's successful one (the seal
/// runs under the writer lock, the leader does not) could otherwise overlap, and the seal
/// would mark as durable the writes whose pages the failure lost.
final class GroupCommit: @unchecked Sendable {
  /// The longest the first waiting writer waits for commits on their way before a sync
  /// starts, in nanoseconds (about one `fdatasync` of a small write on an SSD).
  let gatherLimit: UInt64
  /// The longest it waits when no commit is on its way but writers covered by the last sync
  /// have not left yet, in nanoseconds.
  let settleTime: UInt64

  // State guarded by `condition`.
  private let condition = MonotonicCondition()
  private var durableTicket: UInt64 = 0
  private var syncing = false
  /// Commits announced and not yet arrived in the wait (or dropped).
  private var inFlight = 0
  /// The tickets of the writers in the wait, durable or not yet (a handful: one per waiting
  /// thread).
  private var waiting: [UInt64] = []
  /// When the first writer of the group being gathered arrived (a `MonotonicCondition.now()`).
  private var gatherStart: UInt64?
  /// Waits for a group that ended at their deadline rather than by a wake-up.
  private var deadlinesPassed = 0

  // The sync itself, one at a time; guarded by `syncLock`.
  private let syncLock = NSLock()
  private var syncFailure: CaskError?

  init(gatherLimit: UInt64 = 500_000, settleTime: UInt64 = 100_000) {
    self.gatherLimit = gatherLimit
    self.settleTime = settleTime
  }

  /// A commit that will wait for durability is starting (before it encrypts).
  func begin() -> Announcement {
    condition.lock()
    inFlight += 1
    condition.unlock()
    return Announcement(owner: self)
  }

  /// A commit on its way to the wait: counted from `begin()` until it arrives there
  /// (`waitUntilDurable`) or is dropped, which tells the group that it will not come.
  struct Announcement: ~Copyable {
    // Trivially destroyed (so that `discard self` is allowed); the store that owns the group
    // commit outlives every commit in it.
    private unowned(unsafe) let owner: GroupCommit

    fileprivate init(owner: GroupCommit) {
      self.owner = owner
    }

    /// Returns once `ticket`, the announced commit's, is durable.
    ///
    /// - Parameter sync: syncs the store and returns the highest ticket it covered.
    consuming func waitUntilDurable(_ ticket: UInt64, sync: () throws -> UInt64) throws {
      let owner = self.owner
      discard self
      try owner.wait(for: ticket, arriving: true, sync: sync)
    }

    deinit {
      owner.withdraw()
    }
  }

  /// A commit announced with `begin()` will not arrive: it failed, or wrote nothing.
  private func withdraw() {
    condition.lock()
    inFlight -= 1
    // Writers gathering for the group may have been waiting for this one.
    if inFlight == 0 && !waiting.isEmpty { condition.broadcast() }
    condition.unlock()
  }

  /// Returns once `ticket` is durable, for a caller that announced nothing (`sync()`, a
  /// transaction).
  ///
  /// - Parameter sync: syncs the store and returns the highest ticket it covered.
  func waitUntilDurable(_ ticket: UInt64, sync: () throws -> UInt64) throws {
    try wait(for: ticket, arriving: false, sync: sync)
  }

  private func wait(for ticket: UInt64, arriving: Bool, sync: () throws -> UInt64) throws {
    condition.lock()
    defer { condition.unlock() }
    if arriving { inFlight -= 1 }
    guard durableTicket < ticket else {
      if arriving && inFlight == 0 && !waiting.isEmpty { condition.broadcast() }
      return
    }
    waiting.append(ticket)
    defer { leave(ticket) }
    while durableTicket < ticket {
      if syncing {
        condition.wait()
        continue
      }
      if let deadline = gatherDeadline() {
        // The group is not complete: sleep until it is (its last writer syncs, or a covered
        // writer leaves) or until the deadline, whichever comes first.
        if !condition.wait(until: deadline) { deadlinesPassed += 1 }
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

  /// Called with the lock held: the writer of `ticket` leaves the wait. When that completes
  /// the group of those still waiting, they are woken, so that one of them syncs now instead
  /// of at its deadline.
  private func leave(_ ticket: UInt64) {
    if let index = waiting.firstIndex(of: ticket) { waiting.remove(at: index) }
    if !syncing && !waiting.isEmpty && groupIsComplete { condition.broadcast() }
  }

  private var groupIsComplete: Bool {
    inFlight == 0 && waiting.allSatisfy { $0 > durableTicket }
  }

  /// Called with the lock held by a waiting writer when no sync runs: `nil` when a sync
  /// should start now, else when to look again.
  private func gatherDeadline() -> UInt64? {
    if groupIsComplete { return nil }
    let now = MonotonicCondition.now()
    let start = gatherStart ?? now
    gatherStart = start
    let deadline = start + (inFlight > 0 ? gatherLimit : settleTime)
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

  /// Syncs `file`, the segment being appended to, unless a sync has failed before.
  ///
  /// - Throws: the first failure, `CaskError.io` with the errno.
  func sync(_ file: any StorageFile) throws {
    syncLock.lock()
    defer { syncLock.unlock() }
    if let syncFailure { throw syncFailure }
    do {
      try file.sync()
    } catch {
      let failed = CaskError.converting(error, operation: "fdatasync", path: file.path)
      syncFailure = failed
      throw failed
    }
  }

  /// The failure that stopped syncs, if any.
  var syncFailed: CaskError? {
    syncLock.lock()
    defer { syncLock.unlock() }
    return syncFailure
  }

  /// How many writers are in the wait (for tests of the gathering rule).
  var waitingWriters: Int {
    condition.lock()
    defer { condition.unlock() }
    return waiting.count
  }

  /// How many waits for a group ended at their deadline (for tests of the gathering rule).
  var deadlinesPassedWaiting: Int {
    condition.lock()
    defer { condition.unlock() }
    return deadlinesPassed
  }
}
