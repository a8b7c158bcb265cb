// Fastify schema compilers for routes whose zod schemas describe the OpenAPI document only: the handler checks
// the body itself (answering in the error envelope), and an answer goes out as plain JSON, unchecked.

/** A validatorCompiler that lets every value through to the handler. */
export const noValidation = () => (data: unknown) => ({ value: data });

/** A serializerCompiler that writes the answer with JSON.stringify. */
export const plainJson = () => (data: unknown) => JSON.stringify(data);
