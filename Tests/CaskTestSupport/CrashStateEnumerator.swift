/// One state a crash can leave: the first `crashPoint` operations of a recording were made,
/// and of those the ones in `lost` never reached the disk; `torn` reached it in part.
public struct CrashState: Sendable, Hashable, CustomStringConvertible {
  /// A write of which only the bytes at `kept` (file offsets) reached the disk.
  public struct Tear: Sendable, Hashable {
    public var operation: Int
    public var kept: Range<Int>

    public init(operation: Int, kept: Range<Int>) {
      self.operation = operation
      self.kept = kept
    }
  }

  public var crashPoint: Int
  public var lost: Set<Int>
  public var torn: Tear?

  public init(crashPoint: Int, lost: Set<Int>, torn: Tear? = nil) {
    self.crashPoint = crashPoint
    self.lost = lost
    self.torn = torn
  }

  public var description: String {
    var text = "crash after operation \(crashPoint)"
    if !lost.isEmpty { text += ", lost \(lost.sorted())" }
    if let torn { text += ", operation \(torn.operation) torn to bytes \(torn.kept)" }
    return text
  }
}

/// Every crash state of a recording under a persistence model, within stated bounds: for
/// each crash point (after each operation, and before the first), the operations not yet
/// durable there, and each combination of them the model lets a crash keep (see
/// `CrashPersistenceModel` and `CrashStateBounds`).
public struct CrashStateEnumerator: Sendable {
  public let recording: CrashRecording
  public let model: CrashPersistenceModel
  public let bounds: CrashStateBounds
  /// For each operation, whether it is a write that makes its file longer.
  let extends: [Bool]
  /// For each data operation, the index of the first later `fsync` of its file.
  let nextFileSync: [Int]
  /// For each entry operation, the index by which every directory it changed was synced.
  let nextDirectorySync: [Int]

  public init(recording: CrashRecording, model: CrashPersistenceModel, bounds: CrashStateBounds) {
    self.recording = recording
    self.model = model
    self.bounds = bounds
    let operations = recording.operations
    var sizes = recording.baseFiles.mapValues(\.count)
    var extends = [Bool](repeating: false, count: operations.count)
    for (index, operation) in operations.enumerated() {
      switch operation {
      case .create(_, _, let node): sizes[node] = 0
      case .write(let node, let offset, let bytes, _):
        extends[index] = offset + bytes.count > sizes[node, default: 0]
        sizes[node] = max(sizes[node, default: 0], offset + bytes.count)
      case .truncate(let node, let length): sizes[node] = length
      default: break
      }
    }
    self.extends = extends
    let never = Int.max
    var fileSync = [Int](repeating: never, count: operations.count)
    var directorySync = [Int](repeating: never, count: operations.count)
    // Walk backwards, remembering the next sync of each file and directory.
    var nextSyncOfFile: [Int: Int] = [:]
    var nextSyncOfDirectory: [Int: Int] = [:]
    for index in operations.indices.reversed() {
      let operation = operations[index]
      switch operation {
      case .syncFile(let node): nextSyncOfFile[node] = index
      case .syncDirectory(let node): nextSyncOfDirectory[node] = index
      default: break
      }
      if let node = operation.dataNode { fileSync[index] = nextSyncOfFile[node] ?? never }
      let directories = operation.directories
      if !directories.isEmpty {
        directorySync[index] = directories.map { nextSyncOfDirectory[$0] ?? never }.max() ?? never
      }
    }
    nextFileSync = fileSync
    nextDirectorySync = directorySync
  }

  /// The crash points: after each operation, and before the first.
  public var crashPoints: ClosedRange<Int> { 0...recording.operations.count }

  /// The states a crash after `crashPoint` operations can leave.
  public func states(at crashPoint: Int) -> [CrashState] {
    var result: Set<CrashState> = []
    switch model {
    case .posixMinimum: posixStates(at: crashPoint, into: &result)
    case .ext4Ordered: ext4States(at: crashPoint, into: &result)
    }
    return Array(result)
  }

  /// Whether operation `index` is durable at `crashPoint` by a sync of its own file or
  /// directories.
  func syncedBefore(_ index: Int, _ crashPoint: Int) -> Bool {
    let operation = recording.operations[index]
    if operation.dataNode != nil { return nextFileSync[index] < crashPoint }
    if !operation.directories.isEmpty { return nextDirectorySync[index] < crashPoint }
    return true
  }

  private func posixStates(at crashPoint: Int, into result: inout Set<CrashState>) {
    let pending = (0..<crashPoint).filter { !syncedBefore($0, crashPoint) }
    for lost in bounds.lossSets(of: pending.count) {
      result.insert(CrashState(crashPoint: crashPoint, lost: Set(lost.map { pending[$0] })))
    }
    for (position, index) in pending.enumerated() {
      guard case .write(_, let offset, let bytes, _) = recording.operations[index] else { continue }
      let end = offset + bytes.count
      for cut in bounds.cuts(offset: offset, length: bytes.count, unit: CrashPersistenceModel.sectorSize) {
        for kept in [offset..<cut, cut..<end] {
          let tear = CrashState.Tear(operation: index, kept: kept)
          result.insert(CrashState(crashPoint: crashPoint, lost: [], torn: tear))
          result.insert(CrashState(crashPoint: crashPoint, lost: Set(pending).subtracting([index]), torn: tear))
          result.insert(CrashState(crashPoint: crashPoint, lost: Set(pending[(position + 1)...]), torn: tear))
        }
      }
    }
  }

  private func ext4States(at crashPoint: Int, into result: inout Set<CrashState>) {
    let operations = recording.operations
    var lastCommit = -1
    for index in stride(from: crashPoint - 1, through: 0, by: -1) {
      switch operations[index] {
      case .syncFile, .syncDirectory: lastCommit = index
      default: continue
      }
      break
    }
    var journal: [Int] = []
    var overwrites: [Int] = []
    for index in 0..<crashPoint {
      switch operations[index] {
      case .syncFile, .syncDirectory: continue
      case .write:
        if extends[index] {
          if index > lastCommit { journal.append(index) }
        } else if nextFileSync[index] >= crashPoint {
          overwrites.append(index)
        }
      default:
        if index > lastCommit { journal.append(index) }
      }
    }
    let overwriteLosses = bounds.lossSets(of: overwrites.count).map { Set($0.map { overwrites[$0] }) }
    for kept in 0...journal.count {
      let lostJournal = Set(journal[kept...])
      for lost in overwriteLosses {
        result.insert(CrashState(crashPoint: crashPoint, lost: lostJournal.union(lost)))
      }
      // The last append kept may stop at a page: its size reached the disk with only the
      // pages written back before the commit.
      guard kept > 0, case .write(_, let offset, let bytes, _) = operations[journal[kept - 1]] else { continue }
      for cut in bounds.cuts(offset: offset, length: bytes.count, unit: CrashPersistenceModel.pageSize) {
        let tear = CrashState.Tear(operation: journal[kept - 1], kept: offset..<cut)
        result.insert(CrashState(crashPoint: crashPoint, lost: lostJournal, torn: tear))
        result.insert(CrashState(crashPoint: crashPoint, lost: lostJournal.union(overwrites), torn: tear))
      }
    }
    for index in overwrites {
      guard case .write(_, let offset, let bytes, _) = operations[index] else { continue }
      let end = offset + bytes.count
      for cut in bounds.cuts(offset: offset, length: bytes.count, unit: CrashPersistenceModel.sectorSize) {
        for kept in [offset..<cut, cut..<end] {
          let tear = CrashState.Tear(operation: index, kept: kept)
          result.insert(CrashState(crashPoint: crashPoint, lost: [], torn: tear))
          result.insert(
            CrashState(crashPoint: crashPoint, lost: Set(overwrites).subtracting([index]), torn: tear))
        }
      }
    }
  }
}
