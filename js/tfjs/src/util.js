// What TF.js's Node platform takes from Node's `util` (its text codecs and typed-array
// tests), from the globals Node and browsers share: the bundle then runs in Node too,
// though built for the browser (where the packages map `util` to nothing).
const is = (type) => (a) => a instanceof type;
module.exports = {
  TextEncoder: globalThis.TextEncoder,
  TextDecoder: globalThis.TextDecoder,
  types: {
    isFloat32Array: is(Float32Array),
    isInt32Array: is(Int32Array),
    isUint8Array: is(Uint8Array),
    isUint8ClampedArray: is(Uint8ClampedArray),
  },
};
