import CaskEngine

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The in-memory disk behind a `FaultyFileSystem`: inodes, directories, and for each of them
/// what is durable and what is still only in the page cache. All of it is guarded by the file
/// system's mutex.
///
/// A file keeps two copies of its bytes: `data`, what reads see, and `durable`, what survives
/// power loss; `pending` lists the writes and truncations made since the last `sync()`, in
/// order. A directory does the same with its entries. `sync()` (or `syncDirectory`) applies
/// the pending list to the durable copy; a crash applies a random prefix of it.
struct FaultyDisk {
  /// One change to a file's bytes.
  enum FileChange {
    case write(offset: Int, bytes: [UInt8])
    case truncate(length: Int)
  }

  /// One change to a directory's entries.
  enum EntryChange {
    case link(name: String, inode: Int)
    case unlink(name: String)
    case rename(from: String, to: String)
    /// Two names of one directory swapped in one step.
    case exchange(String, String)
  }

  struct Inode {
    var isDirectory: Bool
    /// Names that refer to it (space is given back when the last one goes).
    var links = 0
    var data: [UInt8] = []
    var durable: [UInt8] = []
    var pending: [FileChange] = []
    var entries: [String: Int] = [:]
    var durableEntries: [String: Int] = [:]
    var pendingEntries: [EntryChange] = []
  }

  /// A fault armed by `FaultyFileSystem.inject(_:)`, with its counters.
  struct ArmedFault {
    var fault: FaultyFileSystem.Fault
    var seen = 0
    var failed = 0
  }

  static let root = 0

  var inodes: [Int: Inode] = [root: Inode(isDirectory: true, links: 1)]
  var nextInode = 1
  var poweredOff = false
  /// Mutating operations left before the power fails; `nil` when no crash is scheduled.
  var crashCountdown: Int?
  var mutations = 0
  /// Bytes that may still be allocated; `nil` for no limit.
  var freeBytes: UInt64?
  var faults: [ArmedFault] = []
  /// Held advisory locks: inode -> lock id -> exclusive.
  var locks: [Int: [Int: Bool]] = [:]
  var nextLock = 1

  // MARK: Paths

  static func components(_ path: String) -> [String] {
    // By UTF-8 bytes, not characters: every file operation splits its path, and splitting by
    // grapheme clusters cost a twentieth of a store fuzz target's time. A "/" byte is never part of a
    // longer UTF-8 sequence, so the names are the same.
    var names: [String] = []
    let utf8 = path.utf8
    var start = utf8.startIndex
    while start != utf8.endIndex {
      let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
      if start != end, !(utf8[start] == UInt8(ascii: ".") && utf8.index(after: start) == end) {
        names.append(String(Substring(utf8[start..<end])))
      }
      start = end == utf8.endIndex ? end : utf8.index(after: end)
    }
    return names
  }

  /// The inode at `path`, or `nil` when it is missing or a parent is not a directory.
  func inode(at path: String) -> Int? {
    var current = Self.root
    for name in Self.components(path) {
      guard let node = inodes[current], node.isDirectory, let next = node.entries[name] else { return nil }
      current = next
    }
    return current
  }

  /// The directory that holds (or would hold) `path`, and the last name of `path`.
  func parent(of path: String, operation: String) throws -> (directory: Int, name: String) {
    let names = Self.components(path)
    guard let name = names.last else { throw CaskError.io(operation: operation, path: path, errno: EISDIR) }
    var current = Self.root
    for component in names.dropLast() {
      guard let next = inodes[current]?.entries[component] else {
        throw CaskError.io(operation: operation, path: path, errno: ENOENT)
      }
      guard inodes[next]?.isDirectory == true else {
        throw CaskError.io(operation: operation, path: path, errno: ENOTDIR)
      }
      current = next
    }
    return (current, name)
  }

  // MARK: Directory changes

  mutating func makeInode(directory: Bool) -> Int {
    defer { nextInode += 1 }
    inodes[nextInode] = Inode(isDirectory: directory)
    return nextInode
  }

  mutating func link(_ inode: Int, as name: String, in directory: Int) {
    if let replaced = inodes[directory]?.entries[name] { dropLink(replaced) }
    inodes[directory]?.entries[name] = inode
    inodes[directory]?.pendingEntries.append(.link(name: name, inode: inode))
    inodes[inode]?.links += 1
  }

  mutating func unlink(_ name: String, in directory: Int) {
    guard let inode = inodes[directory]?.entries.removeValue(forKey: name) else { return }
    inodes[directory]?.pendingEntries.append(.unlink(name: name))
    dropLink(inode)
  }

  mutating func rename(_ source: String, to destination: String, in directory: Int) {
    guard source != destination, let inode = inodes[directory]?.entries[source] else { return }
    if let replaced = inodes[directory]?.entries[destination] { dropLink(replaced) }
    inodes[directory]?.entries[source] = nil
    inodes[directory]?.entries[destination] = inode
    inodes[directory]?.pendingEntries.append(.rename(from: source, to: destination))
  }

  mutating func exchange(_ first: String, _ second: String, in directory: Int) {
    guard let a = inodes[directory]?.entries[first], let b = inodes[directory]?.entries[second] else { return }
    inodes[directory]?.entries[first] = b
    inodes[directory]?.entries[second] = a
    inodes[directory]?.pendingEntries.append(.exchange(first, second))
  }

  /// Gives the space of a file back when its last name goes. (A real file system waits for
  /// the last descriptor too; for a space budget the difference does not matter.)
  private mutating func dropLink(_ inode: Int) {
    inodes[inode]?.links -= 1
    if let node = inodes[inode], node.links == 0, !node.isDirectory {
      release(UInt64(node.data.count))
    }
  }

  mutating func syncEntries(of directory: Int) {
    guard let pending = inodes[directory]?.pendingEntries else { return }
    for change in pending { Self.apply(change, to: &inodes[directory]!.durableEntries) }
    inodes[directory]!.pendingEntries.removeAll()
  }

  static func apply(_ change: EntryChange, to entries: inout [String: Int]) {
    switch change {
    case .link(let name, let inode):
      entries[name] = inode
    case .unlink(let name):
      entries[name] = nil
    case .rename(let source, let destination):
      guard let inode = entries.removeValue(forKey: source) else { return }
      entries[destination] = inode
    case .exchange(let first, let second):
      let a = entries[first]
      entries[first] = entries[second]
      entries[second] = a
    }
  }

  // MARK: File changes

  /// Writes `bytes` at `offset`, within the space budget.
  ///
  /// - Returns: how many bytes were written; fewer than asked when the space ran out.
  mutating func write(_ bytes: [UInt8], at offset: Int, to inode: Int) -> Int {
    guard let size = inodes[inode]?.data.count else { return 0 }
    var count = bytes.count
    if let free = freeBytes {
      let room = size + Int(min(free, UInt64(Int.max / 2))) - offset
      count = max(0, min(count, room))
    }
    guard count > 0 else { return 0 }
    let written = count == bytes.count ? bytes : Array(bytes[0..<count])
    consume(UInt64(max(0, offset + count - size)))
    let change = FileChange.write(offset: offset, bytes: written)
    Self.apply(change, to: &inodes[inode]!.data)
    inodes[inode]?.pending.append(change)
    return count
  }

  /// Cuts or extends a file.
  ///
  /// - Returns: `false` when extending it needs more space than is free.
  mutating func truncate(_ inode: Int, to length: Int) -> Bool {
    guard let size = inodes[inode]?.data.count else { return false }
    if length > size, let free = freeBytes, UInt64(length - size) > free { return false }
    if length > size { consume(UInt64(length - size)) } else { release(UInt64(size - length)) }
    let change = FileChange.truncate(length: length)
    Self.apply(change, to: &inodes[inode]!.data)
    inodes[inode]?.pending.append(change)
    return true
  }

  mutating func syncData(of inode: Int) {
    guard let pending = inodes[inode]?.pending else { return }
    for change in pending { Self.apply(change, to: &inodes[inode]!.durable) }
    inodes[inode]!.pending.removeAll()
  }

  static func apply(_ change: FileChange, to data: inout [UInt8]) {
    switch change {
    case .write(let offset, let bytes):
      if data.count < offset { data.append(contentsOf: repeatElement(0, count: offset - data.count)) }
      let overlap = min(bytes.count, data.count - offset)
      if overlap > 0 { data.replaceSubrange(offset..<offset + overlap, with: bytes[0..<overlap]) }
      if overlap < bytes.count { data.append(contentsOf: bytes[overlap...]) }
    case .truncate(let length):
      if length < data.count {
        data.removeSubrange(length...)
      } else {
        data.append(contentsOf: repeatElement(0, count: length - data.count))
      }
    }
  }

  private mutating func consume(_ bytes: UInt64) {
    if let free = freeBytes { freeBytes = free - min(free, bytes) }
  }

  private mutating func release(_ bytes: UInt64) {
    if let free = freeBytes { freeBytes = free + bytes }
  }
}
