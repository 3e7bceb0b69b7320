import Foundation

/// The files and directories a crash state leaves under the recorded root, by relative path:
/// what is written into a real directory for the store to open.
public struct CrashImage: Sendable, Hashable {
  public var directories: [String] = []
  public var files: [String: [UInt8]] = [:]

  /// The image of `state`: the recording's start with every operation before the crash
  /// point that the state does not lose applied in order, the torn one in part.
  ///
  /// An entry change applies to the node it names: a kept rename puts its file at the new
  /// name even when the file's creation was lost (the directory block naming it reached the
  /// disk), and a removal or rename takes away the old name only if it still names that node.
  public init(_ recording: CrashRecording, _ state: CrashState) {
    var entries = recording.baseEntries
    var contents = recording.baseFiles
    var directoryNodes = Set(recording.baseEntries.keys)
    for index in 0..<state.crashPoint where !state.lost.contains(index) {
      var operation = recording.operations[index]
      if let torn = state.torn, torn.operation == index,
        case .write(let node, let offset, let bytes, let mapped) = operation
      {
        let slice = Array(bytes[(torn.kept.lowerBound - offset)..<(torn.kept.upperBound - offset)])
        operation = .write(node: node, offset: torn.kept.lowerBound, bytes: slice, mapped: mapped)
      }
      switch operation {
      case .makeDirectory(let parent, let name, let node):
        directoryNodes.insert(node)
        if entries[node] == nil { entries[node] = [:] }
        entries[parent, default: [:]][name] = node
      case .create(let parent, let name, let node):
        if contents[node] == nil { contents[node] = [] }
        entries[parent, default: [:]][name] = node
      case .write(let node, let offset, let bytes, _):
        Self.write(bytes, at: offset, to: &contents[node, default: []])
      case .truncate(let node, let length):
        var data = contents[node, default: []]
        if length < data.count {
          data.removeSubrange(length...)
        } else {
          data.append(contentsOf: repeatElement(0, count: length - data.count))
        }
        contents[node] = data
      case .syncFile, .syncDirectory:
        break
      case .rename(let parent, let name, let newParent, let newName, let node):
        if entries[parent]?[name] == node { entries[parent]?[name] = nil }
        entries[newParent, default: [:]][newName] = node
      case .exchange(let parent, let first, let second, let firstNode, let secondNode):
        entries[parent, default: [:]][first] = secondNode
        entries[parent, default: [:]][second] = firstNode
      case .remove(let parent, let name, let node):
        if entries[parent]?[name] == node { entries[parent]?[name] = nil }
      }
    }
    // Walk from the root: only what a path reaches is on the disk.
    var queue: [(node: Int, path: String)] = [(0, "")]
    var visited: Set<Int> = [0]
    while let (node, path) = queue.popLast() {
      for (name, child) in (entries[node] ?? [:]).sorted(by: { $0.key < $1.key }) {
        let childPath = path.isEmpty ? name : "\(path)/\(name)"
        if directoryNodes.contains(child) {
          guard visited.insert(child).inserted else { continue }
          directories.append(childPath)
          queue.append((child, childPath))
        } else {
          files[childPath] = contents[child] ?? []
        }
      }
    }
    directories.sort()
  }

  static func write(_ bytes: [UInt8], at offset: Int, to data: inout [UInt8]) {
    if data.count < offset { data.append(contentsOf: repeatElement(0, count: offset - data.count)) }
    let overlap = min(bytes.count, data.count - offset)
    if overlap > 0 { data.replaceSubrange(offset..<offset + overlap, with: bytes[0..<overlap]) }
    if overlap < bytes.count { data.append(contentsOf: bytes[overlap...]) }
  }

  /// Writes the image under `root`, which must exist and be empty.
  public func write(to root: String) throws {
    let manager = FileManager.default
    for directory in directories {
      try manager.createDirectory(atPath: "\(root)/\(directory)", withIntermediateDirectories: true)
    }
    for (path, bytes) in files {
      try Data(bytes).write(to: URL(fileURLWithPath: "\(root)/\(path)"))
    }
  }
}
