/** Types of `expose-gc/function.js` (the package ships none): V8's `gc`, reached without `--expose-gc`. */
declare module 'expose-gc/function.js' {
  const collectGarbage: () => void;
  export default collectGarbage;
}
