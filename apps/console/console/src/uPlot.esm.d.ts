// The types of uPlot's ES module, which the build copies unchanged beside the console's modules
// (pages/build-pages.mjs), so the page loads it from /console/ like its own code.
import uPlot from 'uplot';

export default uPlot;
