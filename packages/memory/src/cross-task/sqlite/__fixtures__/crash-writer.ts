// Child process of the crash test: adds batches forever, announcing each one before and
// after its transaction, until the parent kills it with SIGKILL.
import { createSqliteMemoryStore } from '../sqlite-memory-store';
import { crashBatch } from './crash-records';

const [path, sizeText] = process.argv.slice(2);
const size = Number(sizeText);
const store = createSqliteMemoryStore({ path: path ?? '', dimensions: 8 });
for (let batch = 0; ; batch++) {
  const records = crashBatch(batch, size);
  // Pipes are synchronous on Linux, so the parent may read this line while the add runs.
  process.stdout.write(`begin ${batch}\n`);
  await store.add(records);
  process.stdout.write(`committed ${batch}\n`);
}
