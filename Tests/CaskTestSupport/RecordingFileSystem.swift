import CaskEngine
import Foundation

/// A file system that does everything for real (`PosixFileSystem` by default) under one root
/// directory and records, in order, every operation that decides what a crash could leave
/// there: creations, writes with their bytes, truncations, file and directory syncs, renames,
/// swaps and removals (`CrashRecording`). Reads, listings and locks taken on existing files
/// change nothing on disk and are not recorded.
///
/// Mapped writes are recorded, not declined: an append copied into the segment's shared
/// mapping reaches the page cache as a `pwrite` does, so it is a write like any other for a
/// crash, and declining it would leave the mapped append path (the one stores use on Linux)
/// unchecked. The file forwards `writeMapped` to the real file and records the bytes when the
/// copy succeeded; when it did not, the engine writes the same bytes with `write`, which is
/// recorded then.
///
/// The workload marks its steps with `beginStep(_:)` and `endStep(_:)`, so that the enumerator
/// knows which steps were acknowledged before each operation.
///
/// `@unchecked Sendable`: the recording and the name table are guarded by `state`; a recorded
/// operation is appended under the same lock that covers the real call, so the order recorded
/// is the order the kernel saw.
public final class RecordingFileSystem: ForwardingFileSystem, @unchecked Sendable {
  struct State {
    var recording = CrashRecording()
    /// Relative path -> node, for everything under the root now.
    var nodes: [String: Int] = ["": 0]
    var directories: Set<Int> = [0]
    var nextNode = 1
    /// Calls the recorder could not place (a path outside the root, a file it never saw made).
    var anomalies: [String] = []
  }

  /// The directory everything is recorded under; paths outside it are forwarded unrecorded.
  public let root: String
  let state: Locked<State>

  /// Records under `root`, whose present contents become the recording's durable start.
  ///
  /// - Throws: the errors of reading `root`.
  public init(root: String, base: any FileSystem = PosixFileSystem()) throws {
    self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
    var initial = State()
    try Self.scan(self.root, relative: "", node: 0, into: &initial)
    state = Locked(initial)
    super.init(base)
  }

  private static func scan(_ path: String, relative: String, node: Int, into state: inout State) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
      let child = state.nextNode
      state.nextNode += 1
      let childRelative = relative.isEmpty ? name : "\(relative)/\(name)"
      state.nodes[childRelative] = child
      state.recording.baseEntries[node, default: [:]][name] = child
      var isDirectory: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: "\(path)/\(name)", isDirectory: &isDirectory)
      if isDirectory.boolValue {
        state.directories.insert(child)
        state.recording.baseEntries[child] = [:]
        try scan("\(path)/\(name)", relative: childRelative, node: child, into: &state)
      } else {
        state.recording.baseFiles[child] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)")))
      }
    }
  }

  /// What was recorded so far.
  public var recording: CrashRecording { state.withLock { $0.recording } }

  /// How many operations were recorded so far (without copying them).
  public var operationCount: Int { state.withLock { $0.recording.operations.count } }

  /// Calls that could not be recorded faithfully; a test asserts there are none.
  public var anomalies: [String] { state.withLock { $0.anomalies } }

  /// Marks the start of a workload step.
  ///
  /// - Returns: the step's number, for `endStep(_:)`.
  public func beginStep(_ label: String) -> Int {
    state.withLock { state in
      state.recording.steps.append((label, state.recording.operations.count, nil))
      return state.recording.steps.count - 1
    }
  }

  /// Marks a step as returned: everything it promised is acknowledged from here on.
  public func endStep(_ step: Int) {
    state.withLock { $0.recording.steps[step].end = $0.recording.operations.count }
  }

  // MARK: Paths

  /// The path relative to the root, or `nil` outside it.
  func relative(_ path: String) -> String? {
    guard path == root || path.hasPrefix(root + "/") else { return nil }
    let names = path.dropFirst(root.count).split(separator: "/").filter { $0 != "." }
    return names.joined(separator: "/")
  }

  static func split(_ relative: String) -> (parent: String, name: String) {
    guard let slash = relative.lastIndex(of: "/") else { return ("", relative) }
    return (String(relative[..<slash]), String(relative[relative.index(after: slash)...]))
  }

  /// Runs the real call and records what it did, under the lock, so that the recorded order
  /// is the real one.
  func record<R>(_ body: (inout State) throws -> R) rethrows -> R {
    try state.withLock { try body(&$0) }
  }

  // MARK: FileSystem

  public override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    try record { state in
      let file = try base.open(path, mode: mode)
      guard let relative = relative(path) else { return file }
      if mode == .createNew {
        let node = state.add(relative, directory: false, anomalyContext: "open")
        return RecordingFile(file, recorder: self, node: node)
      }
      guard let node = state.nodes[relative] else {
        state.anomalies.append("opened a file the recorder did not see made: \(relative)")
        return file
      }
      return RecordingFile(file, recorder: self, node: node)
    }
  }

  public override func createDirectory(_ path: String) throws {
    try record { state in
      try base.createDirectory(path)
      guard let relative = relative(path) else { return }
      var prefix = ""
      for name in relative.split(separator: "/") {
        prefix = prefix.isEmpty ? String(name) : "\(prefix)/\(name)"
        if state.nodes[prefix] == nil { _ = state.add(prefix, directory: true, anomalyContext: "mkdir") }
      }
    }
  }

  public override func createDirectoryExclusively(_ path: String) throws {
    try record { state in
      try base.createDirectoryExclusively(path)
      guard let relative = relative(path) else { return }
      _ = state.add(relative, directory: true, anomalyContext: "mkdir")
    }
  }

  public override func removeFile(_ path: String) throws {
    try record { state in
      try base.removeFile(path)
      if let relative = relative(path) { state.remove(relative) }
    }
  }

  public override func removeDirectory(_ path: String) throws {
    try record { state in
      try base.removeDirectory(path)
      if let relative = relative(path) { state.remove(relative) }
    }
  }

  public override func rename(_ source: String, to destination: String) throws {
    try record { state in
      try base.rename(source, to: destination)
      state.rename(relative(source), relative(destination))
    }
  }

  public override func renameNoReplace(_ source: String, to destination: String) throws {
    try record { state in
      try base.renameNoReplace(source, to: destination)
      state.rename(relative(source), relative(destination))
    }
  }

  public override func exchange(_ first: String, _ second: String) throws {
    try record { state in
      try base.exchange(first, second)
      state.exchange(relative(first), relative(second))
    }
  }

  public override func syncDirectory(_ path: String) throws {
    try record { state in
      try base.syncDirectory(path)
      guard let relative = relative(path) else { return }
      guard let node = state.nodes[relative] else {
        state.anomalies.append("synced a directory the recorder did not see made: \(relative)")
        return
      }
      state.recording.operations.append(.syncDirectory(node: node))
    }
  }

  public override func lock(_ path: String, exclusive: Bool) throws -> any FileLock {
    try record { state in
      let lock = try base.lock(path, exclusive: exclusive)
      if let relative = relative(path), state.nodes[relative] == nil, base.fileKind(path) == .file {
        _ = state.add(relative, directory: false, anomalyContext: "lock")
      }
      return lock
    }
  }
}

extension RecordingFileSystem.State {
  /// Names a new node at `relative` and records its creation.
  mutating func add(_ relative: String, directory: Bool, anomalyContext: String) -> Int {
    let (parentPath, name) = RecordingFileSystem.split(relative)
    guard let parent = nodes[parentPath] else {
      anomalies.append("\(anomalyContext) in a directory the recorder did not see made: \(relative)")
      return -1
    }
    let node = nextNode
    nextNode += 1
    nodes[relative] = node
    if directory {
      directories.insert(node)
      recording.operations.append(.makeDirectory(parent: parent, name: name, node: node))
    } else {
      recording.operations.append(.create(parent: parent, name: name, node: node))
    }
    return node
  }

  mutating func remove(_ relative: String) {
    guard let node = nodes[relative] else { return }
    let (parentPath, name) = RecordingFileSystem.split(relative)
    guard let parent = nodes[parentPath] else { return }
    nodes[relative] = nil
    recording.operations.append(.remove(parent: parent, name: name, node: node))
  }

  /// Moves `source` (and everything below it) to `destination`.
  mutating func rename(_ source: String?, _ destination: String?) {
    guard let source, let destination, source != destination else {
      if source == nil || destination == nil { anomalies.append("a rename across the recorded root") }
      return
    }
    guard let node = nodes[source] else { return }
    let (parentPath, name) = RecordingFileSystem.split(source)
    let (newParentPath, newName) = RecordingFileSystem.split(destination)
    guard let parent = nodes[parentPath], let newParent = nodes[newParentPath] else { return }
    dropTree(destination)
    moveTree(source, to: destination)
    recording.operations.append(
      .rename(parent: parent, name: name, newParent: newParent, newName: newName, node: node))
  }

  mutating func exchange(_ first: String?, _ second: String?) {
    guard let first, let second, let firstNode = nodes[first], let secondNode = nodes[second] else {
      anomalies.append("an exchange the recorder cannot place")
      return
    }
    let (parentPath, firstName) = RecordingFileSystem.split(first)
    let (secondParentPath, secondName) = RecordingFileSystem.split(second)
    guard parentPath == secondParentPath, let parent = nodes[parentPath] else {
      anomalies.append("an exchange across directories")
      return
    }
    let swap = "\u{0}swap"
    moveTree(first, to: swap)
    moveTree(second, to: first)
    moveTree(swap, to: second)
    recording.operations.append(
      .exchange(parent: parent, first: firstName, second: secondName, firstNode: firstNode, secondNode: secondNode))
  }

  private mutating func dropTree(_ path: String) {
    for key in nodes.keys where key == path || key.hasPrefix(path + "/") { nodes[key] = nil }
  }

  private mutating func moveTree(_ source: String, to destination: String) {
    let moved = nodes.filter { $0.key == source || $0.key.hasPrefix(source + "/") }
    for (key, node) in moved {
      nodes[key] = nil
      nodes[destination + key.dropFirst(source.count)] = node
    }
  }
}

/// A file of a `RecordingFileSystem`: every call goes to the real file; writes, truncations
/// and syncs are recorded against the file's node.
final class RecordingFile: StorageFile, @unchecked Sendable {
  let base: any StorageFile
  let recorder: RecordingFileSystem
  let node: Int

  init(_ base: any StorageFile, recorder: RecordingFileSystem, node: Int) {
    self.base = base
    self.recorder = recorder
    self.node = node
  }

  var path: String { base.path }

  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try base.read(into: buffer, at: offset)
  }

  func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
    base.readMapped(into: buffer, at: offset)
  }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    try recorder.record { state in
      try base.write(bytes, at: offset)
      state.recording.operations.append(.write(node: node, offset: Int(offset), bytes: [UInt8](bytes), mapped: false))
    }
  }

  func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
    recorder.record { state in
      guard base.writeMapped(bytes, at: offset) else { return false }
      state.recording.operations.append(.write(node: node, offset: Int(offset), bytes: [UInt8](bytes), mapped: true))
      return true
    }
  }

  func sync() throws {
    try recorder.record { state in
      try base.sync()
      state.recording.operations.append(.syncFile(node: node))
    }
  }

  func startWriteback(from offset: UInt64, count: UInt64) {
    base.startWriteback(from: offset, count: count)
  }

  func size() throws -> UInt64 {
    try base.size()
  }

  func truncate(to length: UInt64) throws {
    try recorder.record { state in
      try base.truncate(to: length)
      state.recording.operations.append(.truncate(node: node, length: Int(length)))
    }
  }

  func close() {
    base.close()
  }
}
