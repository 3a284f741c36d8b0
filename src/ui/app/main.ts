/** The web app's entry: registers `<tessera-app>`; the page (index.html) holds one. */
import "./tessera-app.js";
