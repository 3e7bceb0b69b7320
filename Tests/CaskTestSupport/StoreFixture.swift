import CaskEngine
import Foundation
import RNCryptorCodec

/// The password `withStore` opens its stores with, for tests that reopen the store themselves.
public let testPassword = "pw"

/// scrypt at N = 2^10, r = 8, p = 1 (1 MiB, about a millisecond): the derivation the fixtures
/// give new password stores, so that suites opening hundreds of stores exercise scrypt without
/// paying `KeyDerivation.standard`'s cost each time.
public let testKeyDerivation = CaskStore.KeyDerivation.scrypt(
  RNCryptor.ScryptParameters(costFactor: 1 << 10, blockSize: 8, parallelism: 1))

/// `CaskStore.Options(durability: .never)` with `testKeyDerivation`: what `withStore` opens with.
public var testStoreOptions: CaskStore.Options {
  var options = CaskStore.Options(durability: .never)
  options.keyDerivation = testKeyDerivation
  return options
}

/// Runs `body` with a fresh temporary directory, removed afterwards, also when `body` throws.
///
/// - Parameter label: the start of the directory's name, to tell test leftovers apart.
public func withTemporaryDirectory<R>(
  _ label: String = "cask", _ body: (_ directory: TemporaryDirectory) throws -> R
) throws -> R {
  let directory = try TemporaryDirectory(label)
  defer { directory.remove() }
  return try body(directory)
}

/// The `async` form of `withTemporaryDirectory(_:_:)`.
public func withTemporaryDirectory<R>(
  _ label: String = "cask", _ body: (_ directory: TemporaryDirectory) async throws -> R
) async throws -> R {
  let directory = try TemporaryDirectory(label)
  defer { directory.remove() }
  return try await body(directory)
}

/// Runs `body` with a new store at `path` (`store.cask` in a fresh temporary directory), opened
/// with `password` and `options`; then closes the store and removes the directory, also when
/// `body` throws.
///
/// The body may close the store and reopen `path` itself (a second `close()` of a store closed
/// cleanly does nothing). A close that fails after a body that returned is thrown: a test must
/// not pass over a store that could not sync. `options.fileSystem` must see the temporary
/// directory (the real file system does; a `FaultyFileSystem` does not).
///
/// - Parameters:
///   - options: how to open the store; `testStoreOptions` by default (`.never` durability, as
///     tests need no fsync, and `testKeyDerivation`).
///   - password: the store's password, `testPassword` by default.
///   - label: the start of the directory's name.
public func withStore<R>(
  options: CaskStore.Options = testStoreOptions, password: String = testPassword,
  label: String = "store", _ body: (_ store: CaskStore, _ path: String) throws -> R
) throws -> R {
  try withTemporaryDirectory(label) { directory in
    let path = directory.file("store.cask")
    let store = try CaskStore(path: path, password: password, options: options)
    let result: R
    do {
      result = try body(store, path)
    } catch {
      try? store.close()
      throw error
    }
    try store.close()
    return result
  }
}

/// The `async` form of `withStore(options:password:label:_:)`.
public func withStore<R>(
  options: CaskStore.Options = testStoreOptions, password: String = testPassword,
  label: String = "store", _ body: (_ store: CaskStore, _ path: String) async throws -> R
) async throws -> R {
  try await withTemporaryDirectory(label) { directory in
    let path = directory.file("store.cask")
    let store = try CaskStore(path: path, password: password, options: options)
    let result: R
    do {
      result = try await body(store, path)
    } catch {
      try? store.close()
      throw error
    }
    try store.close()
    return result
  }
}

/// Writes `value` (or deletes, for `nil`) under `key` bypassing the check that keeps a kept
/// group's derived data (a collection's secondary indexes): as a tool or a version of CipherCask
/// that did not check it would have, so that tests can make the disagreement the index checks
/// must report. The group's marker in `CaskFormat.keptGroupsCatalog` is removed for the write
/// and put back after it.
public func plantUnchecked(_ value: Data?, forKey key: String, in store: CaskStore) throws {
  let group = key.split(separator: Character(CaskFormat.keyGroupSeparatorText), maxSplits: 1).first ?? ""
  let marker = CaskFormat.keptGroupsCatalog + CaskFormat.keyGroupSeparatorText + group
  let saved = try store.get(marker)
  if saved != nil { try store.delete(marker) }
  if let value { try store.put(value, forKey: key) } else { try store.delete(key) }
  if let saved { try store.put(saved, forKey: marker) }
}
