import Foundation

/// What `cask-bench` asks a peer process to run, as JSON in its one argument; the peer answers
/// with a `PeerReport` on standard output, so the two sides share types, not a command line.
///
/// ```
/// peer-lmdb '{"mode":"kv","engine":"lmdb+rncryptor","size":10000,"runs":1,"durability":"never","directory":"/tmp/x","seed":42}'
/// peer-lmdb list
/// ```
public struct PeerRequest: Codable, Sendable {
  public enum Mode: String, Codable, Sendable {
    /// `KVRunner`, `KVRunner.durable`, `ObjectRunner`, `EventQueryRunner`.
    case kv, durable, objects, queries
  }

  public var mode: Mode
  public var engine: String
  /// Keys, objects or events in the store (for durable puts, the most puts of a run).
  public var size: Int
  public var runs: Int
  public var durability: Durability
  public var directory: String
  public var seed: UInt64
  /// `kv`: the workloads to record (all when `nil`).
  public var workloads: [String]?
  /// `durable`: the puts of a run with 1 writer and with 8.
  public var durablePuts1: Int?
  public var durablePuts8: Int?
  /// `objects`: only `save` and `get` (the per-object PBKDF2 design).
  public var saveAndGetOnly: Bool?

  /// `name` in `directory`, empty: removed with what it held, then created.
  func freshDirectory(_ name: String) throws -> String {
    let path = directory + "/" + name
    try? FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  public init(
    _ mode: Mode, engine: String, size: Int, runs: Int = 1, durability: Durability = .never, directory: String,
    seed: UInt64
  ) {
    self.mode = mode
    self.engine = engine
    self.size = size
    self.runs = runs
    self.durability = durability
    self.directory = directory
    self.seed = seed
  }
}
